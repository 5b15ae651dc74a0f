import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import {
  type Bus,
  consumeStorageRecords,
  RECORDS_HEADER,
  type RecordBatchMeta,
  type RecordsPayload,
  readRecordMessage,
} from '@tracehub/bus';
import { type Log, RepeatedErrorLog, silentLog, type TraceRecord } from '@tracehub/contracts';
import {
  addSessionCountsMany,
  BadRecordsError,
  type Database,
  lockSessions,
  markSessionEnded,
  pieceJson,
  type RecordPiece,
  recordLoss,
  retryPostgres,
  type SessionRecords,
  setSessionRecordTotal,
  storeRecords,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { storageDefaults } from './config.js';
import { compareText, hostDate, LinkRegistry } from './link-registry.js';
import { waitHolding } from './postgres-retry.js';

export interface RecordStoreOptions {
  bus: Bus;
  db: Kysely<Database>;
  /** A batch is written when it holds this many records... */
  batchRecords?: number;
  /** ...or this long after its first message, ms. */
  batchMs?: number;
  /** Messages delivered but not yet acknowledged, at most (bounds memory while Postgres is away). */
  maxInFlight?: number;
  /**
   * How long a delivered message may stay unacknowledged before JetStream delivers it again,
   * ms (default 30 000): how soon another storage takes over what a dead one held. While
   * Postgres is away every held message is kept with `working()`, so an outage, however
   * long, does not trigger re-deliveries.
   */
  ackWaitMs?: number;
  /** Transactions written at the same time (Postgres uses a core for each). */
  writers?: number;
  log?: Log;
  /** While Postgres refuses writes: how often the log counts the failures since the first, ms (default 60 000). */
  failureSummaryMs?: number;
  /**
   * Called for each message dropped (metrics): `unreadable`, not a record batch at all (no
   * session to charge it to), or `refused`, records Postgres refused as data (kept as a
   * record loss of their session).
   */
  onDropped?: (info: { records: number; reason: 'unreadable' | 'refused' }) => void;
  /** Called after each committed batch (metrics). */
  onBatch?: (info: { messages: number; records: number; inserted: number; ms: number; attempts: number }) => void;
}

/**
 * Moves records from TRACE_REC into Postgres. Messages are gathered into batches; a batch is
 * written in one transaction and acknowledged only after the commit, so a crash or an outage
 * loses nothing (JetStream delivers again) and doubles nothing (inserts are idempotent and
 * session counts are only added for rows that were new). Several stores may share the
 * durable consumer.
 */
export class RecordStore {
  private messages: ConsumerMessages | undefined;
  /** Messages taken and not yet written, each with its record count (read once, from its header). */
  private pending: Array<{ msg: JsMsg; records: number }> = [];
  private pendingRecords = 0;
  private timer: NodeJS.Timeout | undefined;
  private active = 0;
  private readonly writes = new Set<Promise<void>>();
  private roomWaiters: Array<() => void> = [];
  private loop: Promise<void> | undefined;
  /** Rigs, links and sessions already registered by this process. */
  private readonly registry = new LinkRegistry();
  /** Counters; `redelivered`: messages JetStream delivered again (a dead storage's, or held too long). */
  readonly stats = { batches: 0, records: 0, inserted: 0, failures: 0, redelivered: 0, dropped: 0 };

  /** Every retry fails while Postgres is away: logged when it starts, counted, and once when it works again. */
  private readonly postgresFailures: RepeatedErrorLog;

  constructor(private readonly options: RecordStoreOptions) {
    this.postgresFailures = new RepeatedErrorLog(
      options.log ?? silentLog,
      'record batch write to Postgres',
      options.failureSummaryMs,
    );
  }

  private get batchRecords(): number {
    return this.options.batchRecords ?? storageDefaults.batchRecords;
  }

  private get writers(): number {
    return this.options.writers ?? storageDefaults.writers;
  }

  async start(): Promise<void> {
    const { bus } = this.options;
    this.messages = await consumeStorageRecords(bus, {
      ackWaitMs: this.options.ackWaitMs ?? storageDefaults.ackWaitMs,
      maxAckPending: this.options.maxInFlight ?? storageDefaults.maxInFlight,
      pullMessages: 64,
    });
    const loop = async () => {
      for await (const msg of this.messages!) {
        this.take(msg);
        // Do not run ahead of Postgres: while every writer is busy and a batch is waiting, wait.
        while (this.active >= this.writers && this.pendingRecords >= this.batchRecords) {
          await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
        }
      }
    };
    // Never a rejected promise: a consumer that fails (its connection closed) ends the loop.
    this.loop = loop().catch((err: unknown) => {
      this.options.log?.warn({ err }, 'record consumer ended');
    });
  }

  /** Stops taking messages and writes what was taken (acking it); unwritten messages come back later. */
  async stop(): Promise<void> {
    await this.messages?.close().catch(() => {});
    for (const w of this.roomWaiters.splice(0)) w();
    await this.loop?.catch(() => {});
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.pending.length > 0 || this.writes.size > 0) {
      this.kick(true);
      await Promise.race(this.writes);
    }
  }

  private take(msg: JsMsg): void {
    if (msg.info.deliveryCount > 1) this.stats.redelivered++;
    // The decoder says how many records a message holds; count one when it does not.
    const records = Math.max(1, Number(msg.headers?.get(RECORDS_HEADER)) || 1);
    this.pending.push({ msg, records });
    this.pendingRecords += records;
    if (this.pendingRecords >= this.batchRecords) this.kick(false);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.kick(true);
      }, this.options.batchMs ?? storageDefaults.batchMs);
    }
  }

  /** Starts writes while writers are free and there is a full batch (or, when forced, anything). */
  private kick(force: boolean): void {
    while (
      this.active < this.writers &&
      this.pending.length > 0 &&
      (force || this.pendingRecords >= this.batchRecords)
    ) {
      // Take whole messages up to one batch's worth of records.
      let n = 0;
      let records = 0;
      while (n < this.pending.length && (n === 0 || records < this.batchRecords)) {
        records += this.pending[n].records;
        n++;
      }
      const msgs = this.pending.splice(0, n).map((p) => p.msg);
      this.pendingRecords -= records;
      this.active++;
      const write: Promise<void> = this.flush(msgs).finally(() => {
        this.active--;
        this.writes.delete(write);
        for (const w of this.roomWaiters.splice(0)) w();
        if (this.pendingRecords >= this.batchRecords) this.kick(false);
        else if (this.pending.length > 0 && !this.timer) this.kick(true);
      });
      this.writes.add(write);
    }
  }

  private async flush(msgs: JsMsg[]): Promise<void> {
    const started = performance.now();
    const items: StoredMessage[] = [];
    for (const msg of msgs) {
      const item = this.read(msg);
      if (item) items.push(item);
    }
    const { attempts, ...written } = await this.retry(() => this.write(items), msgs);
    // Something in the batch can never be stored: find it, and write the rest.
    const inserted = written.ok ? written.value : await this.writeOneByOne(items);
    for (const item of items) if (!item.dropped) item.msg.ack();
    const records = items.reduce((n, item) => n + (item.dropped ? 0 : item.meta.recordCount), 0);
    this.stats.batches++;
    this.stats.records += records;
    this.stats.inserted += inserted;
    this.options.onBatch?.({ messages: msgs.length, records, inserted, ms: performance.now() - started, attempts });
  }

  /** A message's envelope and records JSON; one that is not a record batch is said so and dropped. */
  private read(msg: JsMsg): StoredMessage | undefined {
    try {
      const { meta, records } = readRecordMessage(this.options.bus.names, msg.subject, msg.headers, msg.data);
      return { msg, meta, records, dropped: false };
    } catch (err) {
      const records = Math.max(1, Number(msg.headers?.get(RECORDS_HEADER)) || 1);
      this.drop(msg, err, 'unreadable record batch dropped', records, 'unreadable');
      return undefined;
    }
  }

  private drop(msg: JsMsg, err: unknown, why: string, records: number, reason: 'unreadable' | 'refused'): void {
    // The message says what was wrong with the data; a stack would only point at this file.
    this.options.log?.error({ err: (err as Error).message, subject: msg.subject, seq: msg.seq, records }, why);
    msg.term();
    this.stats.dropped += records;
    this.options.onDropped?.({ records, reason });
  }

  /**
   * Keeps that a message's records were refused (a record loss of their session), retrying
   * while Postgres is away: a drop is never silent. Only then is the message dropped.
   */
  private async refuse(item: StoredMessage, err: unknown): Promise<void> {
    const { meta } = item;
    const reason = (err as Error).message;
    const kept = await this.retry(
      () =>
        this.options.db.transaction().execute(async (trx) => {
          await recordLoss(trx, {
            session: meta.session,
            chunk: meta.chunk,
            firstSeq: meta.summary?.firstSeq ?? null,
            lastSeq: meta.summary?.lastSeq ?? null,
            records: meta.recordCount,
            reason,
          });
          // The session's end came with the refused records: it still ended.
          if (meta.eos) {
            await markSessionEnded(trx, meta.session, hostDate(meta.hostNs), meta.chunk);
            if (meta.sessionRecordCount !== undefined)
              await setSessionRecordTotal(trx, meta.session, meta.sessionRecordCount);
          }
        }),
      [item.msg],
    );
    if (!kept.ok)
      this.options.log?.error({ err: (kept.refused as Error).message, session: meta.session }, 'record loss not kept');
    item.dropped = true;
    this.drop(
      item.msg,
      err,
      'record batch refused as data dropped (kept as a record loss)',
      meta.recordCount,
      'refused',
    );
  }

  /** Waits before a retry, holding the messages being written and those waiting for a writer. */
  private waitHolding(ms: number, msgs: JsMsg[]): Promise<void> {
    return waitHolding(ms, this.options.ackWaitMs ?? storageDefaults.ackWaitMs, () => [
      ...msgs,
      ...this.pending.map((p) => p.msg),
    ]);
  }

  /**
   * `write` until Postgres answers (`retryPostgres`), holding `msgs` and those waiting
   * meanwhile; the failures counted and logged as a run, ended by the answer (a write or a
   * refusal as data: Postgres is there either way).
   */
  private async retry<T>(write: () => Promise<T>, msgs: JsMsg[]) {
    const result = await retryPostgres(write, {
      wait: (ms) => this.waitHolding(ms, msgs),
      onFailure: (err) => {
        this.stats.failures++;
        this.postgresFailures.failed(err);
      },
    });
    this.postgresFailures.succeeded();
    return result;
  }

  /** Writes each message in a transaction of its own; those Postgres refuses as data are dropped. */
  private async writeOneByOne(items: StoredMessage[]): Promise<number> {
    let inserted = 0;
    for (const item of items) {
      const written = await this.retry(() => this.write([item]), [item.msg]);
      if (written.ok) inserted += written.value;
      else await this.refuse(item, written.refused);
    }
    return inserted;
  }

  /** Writes the messages in one transaction; returns how many records were new. */
  private async write(items: StoredMessage[]): Promise<number> {
    const bySession = new Map<string, { first: RecordBatchMeta; ends: RecordBatchMeta[]; items: StoredMessage[] }>();
    for (const item of items) {
      const { meta } = item;
      let group = bySession.get(meta.session);
      if (!group) bySession.set(meta.session, (group = { first: meta, ends: [], items: [] }));
      if (meta.eos) group.ends.push(meta);
      if (('json' in item.records ? item.records.json.length : item.records.jsonBytes) > 0) group.items.push(item);
    }
    // A session's records go to storeRecords as the messages carried them: with the summaries
    // their decoder made, they are stored without being parsed here.
    const batch: SessionRecords[] = [];
    for (const [session, group] of bySession) {
      if (group.items.length === 0) continue;
      const { protocol, rig, link } = group.first;
      const place = { session, protocol, rig, link };
      if (group.items.every((item) => usableSummary(item.meta))) {
        const pieces = group.items.map((item): RecordPiece => ({ ...item.records, summary: item.meta.summary! }));
        batch.push({ session, place, pieces: pieces.sort((a, b) => a.summary.firstSeq - b.summary.firstSeq) });
      } else {
        batch.push({ session, records: group.items.flatMap((item) => parseRecords(pieceJson(item.records))) });
      }
    }
    const sessions = [...bySession.keys()].sort(compareText);
    await this.registry.ensure(
      this.options.db,
      sessions.map((session) => bySession.get(session)!.first),
    );
    const inserted = await this.options.db.transaction().execute(async (trx) => {
      // Every session row this batch updates, locked first and in one order.
      await lockSessions(trx, sessions);
      let total = 0;
      if (batch.length > 0) {
        const result = await storeRecords(trx, batch);
        total = result.inserted;
        await addSessionCountsMany(
          trx,
          result.sessions.filter((summary) => summary.counts.records > 0),
        );
        for (const summary of result.sessions) {
          const group = bySession.get(summary.session);
          if (summary.targetInfo && group) await this.registry.setTargetInfo(trx, group.first, summary.targetInfo);
        }
      }
      for (const session of sessions) {
        for (const end of bySession.get(session)!.ends) {
          await markSessionEnded(trx, session, hostDate(end.hostNs), end.chunk);
          if (end.sessionRecordCount !== undefined) await setSessionRecordTotal(trx, session, end.sessionRecordCount);
        }
      }
      return total;
    });
    return inserted;
  }
}

/** A message's records (the inside of its JSON array), parsed; JSON that is not records is refused as data. */
function parseRecords(json: Uint8Array): TraceRecord[] {
  let records: unknown;
  try {
    records = JSON.parse(`[${Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')}]`);
  } catch (err) {
    throw new BadRecordsError('22P02', `a record batch is not JSON: ${(err as Error).message}`);
  }
  return records as TraceRecord[];
}

/** A summary that can stand for the message's records: one per record counted, its seq range sound. */
function usableSummary(meta: RecordBatchMeta): boolean {
  const s = meta.summary;
  return (
    s !== undefined &&
    s.recordCount === meta.recordCount &&
    Number.isInteger(s.firstSeq) &&
    Number.isInteger(s.lastSeq) &&
    s.lastSeq - s.firstSeq + 1 >= s.recordCount &&
    typeof s.minHostNs === 'string' &&
    /^[0-9]{1,20}$/.test(s.minHostNs) &&
    typeof s.maxHostNs === 'string' &&
    /^[0-9]{1,20}$/.test(s.maxHostNs) &&
    Array.isArray(s.names) &&
    Array.isArray(s.dictionary)
  );
}

/** One message being stored: its envelope, and its records unparsed (JSON without the brackets, or its zstd frame). */
interface StoredMessage {
  msg: JsMsg;
  meta: RecordBatchMeta;
  records: RecordsPayload;
  /** Refused by Postgres as data: terminated, never acked. */
  dropped: boolean;
}
