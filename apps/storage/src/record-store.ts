import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { type Bus, parseRecordBatch, RECORDS_HEADER } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import {
  addSessionCounts,
  type Database,
  type DictionaryEntry,
  insertRecords,
  markSessionEnded,
  recountSession,
  setSessionRecordTotal,
  upsertDictionaryEntries,
  upsertLink,
  upsertRig,
  upsertSession,
} from '@tracehub/db';
import type { Kysely } from 'kysely';

export interface RecordStoreOptions {
  bus: Bus;
  db: Kysely<Database>;
  /** A batch is written when it holds this many records... */
  batchRecords?: number;
  /** ...or this long after its first message, ms. */
  batchMs?: number;
  /** Messages delivered but not yet acknowledged, at most (bounds memory while Postgres is away). */
  maxInFlight?: number;
  /** Transactions written at the same time (Postgres uses a core for each). */
  writers?: number;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
  /** Called after each committed batch (metrics). */
  onBatch?: (info: { messages: number; records: number; inserted: number; ms: number; attempts: number }) => void;
}

const ns = (ms: number) => ms * 1_000_000;

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
  /** Rigs, links and sessions already registered by this process: a cache, bounded (see remember). */
  private readonly known = { rigs: new Set<string>(), links: new Set<string>(), sessions: new Set<string>() };
  readonly stats = { batches: 0, records: 0, inserted: 0, failures: 0 };

  constructor(private readonly options: RecordStoreOptions) {}

  private get batchRecords(): number {
    return this.options.batchRecords ?? 5000;
  }

  private get writers(): number {
    return this.options.writers ?? 2;
  }

  async start(): Promise<void> {
    const { bus } = this.options;
    await bus.jsm.consumers.add(bus.names.recStream, {
      durable_name: bus.names.storageConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ns(30_000),
      max_ack_pending: this.options.maxInFlight ?? 256,
      max_deliver: -1,
    });
    const consumer = await bus.js.consumers.get(bus.names.recStream, bus.names.storageConsumer);
    this.messages = await consumer.consume({ max_messages: 64 });
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
      this.options.log?.warn({ err: String(err) }, 'record consumer ended');
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
    // The decoder says how many records a message holds; count one when it does not.
    const records = Math.max(1, Number(msg.headers?.get(RECORDS_HEADER)) || 1);
    this.pending.push({ msg, records });
    this.pendingRecords += records;
    if (this.pendingRecords >= this.batchRecords) this.kick(false);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.kick(true);
      }, this.options.batchMs ?? 50);
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
    const batches: RecordBatch[] = [];
    for (const msg of msgs) {
      try {
        batches.push(parseRecordBatch(msg.data));
      } catch (err) {
        // A message that is not a record batch can never be stored: say so and drop it.
        this.options.log?.error(
          { err: String(err), subject: msg.subject, seq: msg.seq },
          'unreadable record batch dropped',
        );
        msg.term();
      }
    }
    let attempts = 0;
    let backoff = 200;
    let inserted = 0;
    for (;;) {
      attempts++;
      try {
        inserted = await this.write(batches);
        break;
      } catch (err) {
        this.stats.failures++;
        if (attempts === 1)
          this.options.log?.warn({ err: String(err) }, 'Postgres write failed; retrying with backoff');
        // Keep the messages ours while we wait; they are acked only after a commit.
        for (const m of msgs) m.working();
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
    if (attempts > 1) this.options.log?.info({ attempts }, 'Postgres is back; batch written');
    for (const m of msgs) m.ack();
    const records = batches.reduce((n, b) => n + b.records.length, 0);
    this.stats.batches++;
    this.stats.records += records;
    this.stats.inserted += inserted;
    this.options.onBatch?.({ messages: msgs.length, records, inserted, ms: performance.now() - started, attempts });
  }

  /** Writes the batches in one transaction; returns how many records were new. */
  private async write(batches: RecordBatch[]): Promise<number> {
    const bySession = new Map<string, { first: RecordBatch; records: TraceRecord[]; ends: RecordBatch[] }>();
    for (const b of batches) {
      let group = bySession.get(b.session);
      if (!group) bySession.set(b.session, (group = { first: b, records: [], ends: [] }));
      for (const r of b.records) group.records.push(r);
      if (b.eos) group.ends.push(b);
    }
    const newlyKnown: Array<() => void> = [];
    const inserted = await this.options.db.transaction().execute(async (trx) => {
      let total = 0;
      // Sessions in one order in every transaction, so concurrent writers lock rows alike.
      for (const [session, group] of [...bySession].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const { first } = group;
        const startedAt = hostDate(first.hostNs);
        if (!this.known.rigs.has(first.rig)) {
          await upsertRig(trx, first.rig, startedAt);
          newlyKnown.push(() => remember(this.known.rigs, first.rig));
        }
        const linkKey = `${first.rig}/${first.link}`;
        if (!this.known.links.has(linkKey)) {
          await upsertLink(trx, { rig: first.rig, name: first.link, protocol: first.protocol });
          newlyKnown.push(() => remember(this.known.links, linkKey));
        }
        const targetInfo = group.records.find((r) => r.name === 'QS_TARGET_INFO');
        if (!this.known.sessions.has(session) || targetInfo) {
          await upsertSession(trx, {
            id: session,
            rig: first.rig,
            link: first.link,
            protocol: first.protocol,
            startedAt,
            targetInfo: targetInfo ? (targetInfo.fields as Record<string, unknown>) : null,
          });
          newlyKnown.push(() => remember(this.known.sessions, session));
        }
        const n = await insertRecords(trx, group.records);
        total += n;
        if (n === group.records.length && n > 0) {
          await addSessionCounts(trx, session, sessionCounts(group.records));
        } else if (n > 0) {
          // Some were stored before (a re-delivery mixed with new records): count afresh.
          await recountSession(trx, session);
        }
        const dictionary = dictionaryEntries(group.records);
        if (dictionary.length > 0) await upsertDictionaryEntries(trx, dictionary);
        for (const end of group.ends) {
          await markSessionEnded(trx, session, hostDate(end.hostNs), end.chunk);
          if (end.sessionRecordCount !== undefined) await setSessionRecordTotal(trx, session, end.sessionRecordCount);
        }
      }
      return total;
    });
    for (const f of newlyKnown) f();
    return inserted;
  }
}

function hostDate(hostNs: string): Date {
  return new Date(Number(BigInt(hostNs) / 1_000_000n));
}

/** Orders two non-negative decimal strings (host ns) without parsing them. */
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Adds to a cache of what is registered; past 10 000 entries it starts afresh (a forgotten
 * entry only costs one idempotent upsert), so a long-running storage does not grow with the
 * number of sessions it has seen.
 */
function remember(cache: Set<string>, key: string): void {
  if (cache.size >= 10_000) cache.clear();
  cache.add(key);
}

function sessionCounts(records: TraceRecord[]) {
  let errors = 0;
  let gaps = 0;
  let lostBytes = 0;
  let lastChunk = -1;
  let first = records[0].hostNs;
  let last = records[0].hostNs;
  for (const r of records) {
    if (r.kind === 'error') errors++;
    if (r.name === 'SEQ_GAP') gaps++;
    const lost = r.fields.lostBytes;
    if (r.kind === 'error' && typeof lost === 'number') lostBytes += lost;
    if (r.chunk > lastChunk) lastChunk = r.chunk;
    if (compareDecimal(r.hostNs, first) < 0) first = r.hostNs;
    if (compareDecimal(r.hostNs, last) > 0) last = r.hostNs;
  }
  return {
    records: records.length,
    errors,
    gaps,
    lostBytes,
    lastChunk,
    firstHostTime: hostDate(first),
    lastHostTime: hostDate(last),
  };
}

/** Dictionary records (kind `dict`) become entries: kind = record name, key = the other fields. */
function dictionaryEntries(records: TraceRecord[]): DictionaryEntry[] {
  const out: DictionaryEntry[] = [];
  for (const r of records) {
    if (r.kind !== 'dict' || typeof r.fields.name !== 'string') continue;
    const key = Object.entries(r.fields)
      .filter(([k]) => k !== 'name')
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',');
    out.push({ session: r.session, kind: r.name, key, name: r.fields.name });
  }
  return out;
}
