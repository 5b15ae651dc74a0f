import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { type Bus, ensureDurable, readRawChunkMeta, storageRawConsumerConfig } from '@tracehub/bus';
import { type Log, RepeatedErrorLog, silentLog } from '@tracehub/contracts';
import {
  type Database,
  insertLinkChunks,
  type LinkChunk,
  lockSessions,
  retryPostgres,
  type SessionLinkChunks,
  setSessionLinkSettings,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { storageDefaults } from './config.js';
import { compareText, LinkRegistry, type SessionPlace } from './link-registry.js';
import { waitHolding } from './postgres-retry.js';

export interface LinkBytesStoreOptions {
  bus: Bus;
  db: Kysely<Database>;
  /** A batch is written when it holds this many bytes of link data... */
  batchBytes?: number;
  /** ...or this long after its first chunk, ms. Link bytes are not queried live: a longer wait makes bigger blocks. */
  batchMs?: number;
  /** Raw chunks delivered but not yet acknowledged, at most. */
  maxInFlight?: number;
  /** How long a delivered chunk may stay unacknowledged before JetStream delivers it again, ms. */
  ackWaitMs?: number;
  log?: Log;
  /** Called after each committed batch (metrics). */
  onBatch?: (info: { chunks: number; stored: number; bytes: number; ms: number; attempts: number }) => void;
  /** Called for each raw chunk dropped, unreadable or refused by Postgres (metrics). */
  onDropped?: (info: { bytes: number }) => void;
}

interface HeldChunk {
  msg: JsMsg;
  place: SessionPlace;
  chunk: LinkChunk;
  /** Link settings the gateway sent with the chunk (`th-settings`). */
  settings?: Record<string, unknown>;
}

/**
 * Keeps the link's bytes: every raw chunk on TRACE_RAW goes into Postgres (`link_chunks`),
 * in blocks of consecutive chunks, compressed, independently of decoding. A batch is written
 * in one transaction and acknowledged only after the commit; the insert is idempotent on
 * (session, chunk), so a crash, an outage or a re-delivery neither loses nor doubles a byte.
 * Several stores may share the durable consumer.
 */
export class LinkBytesStore {
  private messages: ConsumerMessages | undefined;
  private pending: HeldChunk[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private loop: Promise<void> | undefined;
  private readonly registry = new LinkRegistry();
  /** Sessions whose gateway settings this process stored (bounded as the registry is). */
  private readonly settingsKept = new Set<string>();
  readonly stats = { batches: 0, chunks: 0, stored: 0, bytes: 0, failures: 0 };

  /** Every retry fails while Postgres is away: logged when it starts, counted, and once when it works again. */
  private readonly postgresFailures: RepeatedErrorLog;

  constructor(private readonly options: LinkBytesStoreOptions) {
    this.postgresFailures = new RepeatedErrorLog(options.log ?? silentLog, 'link bytes write to Postgres');
  }

  private get batchBytes(): number {
    return this.options.batchBytes ?? 4 * 1024 * 1024;
  }

  async start(): Promise<void> {
    const { bus } = this.options;
    // A copy started with other settings updates the shared consumer.
    await ensureDurable(
      bus,
      bus.names.rawStream,
      storageRawConsumerConfig(bus, { ackWaitMs: this.options.ackWaitMs, maxAckPending: this.options.maxInFlight }),
      'update',
    );
    const consumer = await bus.js.consumers.get(bus.names.rawStream, bus.names.storageRawConsumer);
    this.messages = await consumer.consume({ max_messages: 256 });
    const loop = async () => {
      for await (const msg of this.messages!) {
        this.take(msg);
        // One batch written at a time; while it is, the next one fills up to its size, then waits.
        while (this.pendingBytes >= this.batchBytes) await this.writing;
      }
    };
    this.loop = loop().catch((err: unknown) => {
      this.options.log?.warn({ err }, 'raw chunk consumer ended');
    });
  }

  /** Stops taking chunks and writes what was taken; unwritten chunks come back later. */
  async stop(): Promise<void> {
    await this.messages?.close().catch(() => {});
    await this.loop?.catch(() => {});
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
    await this.writing;
  }

  private take(msg: JsMsg): void {
    const place = this.options.bus.names.parseSubject(msg.subject);
    let held: HeldChunk;
    try {
      if (place?.kind !== 'raw') throw new Error(`not a raw subject: ${msg.subject}`);
      const meta = readRawChunkMeta(msg.headers);
      const chunk: LinkChunk = {
        chunk: meta.chunk,
        recvNs: meta.recvNs,
        lost: meta.lost,
        eos: meta.eos,
        data: msg.data,
      };
      if (meta.pauseNs !== undefined) chunk.pauseNs = meta.pauseNs;
      if (meta.segments) chunk.segments = meta.segments;
      if (meta.marker) chunk.marker = meta.marker;
      held = { msg, chunk, place: { ...place, session: meta.session, hostNs: meta.recvNs.toString() } };
      if (meta.settings) held.settings = meta.settings;
    } catch (err) {
      this.options.log?.error({ err, subject: msg.subject, seq: msg.seq }, 'unreadable raw chunk dropped');
      msg.term();
      this.options.onDropped?.({ bytes: msg.data.length });
      return;
    }
    this.pending.push(held);
    this.pendingBytes += held.chunk.data.length;
    if (this.pendingBytes >= this.batchBytes) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, this.options.batchMs ?? storageDefaults.linkBatchMs);
    }
  }

  /** Queues what is pending as the next write. */
  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    this.writing = this.writing.then(() => this.writeBatch(batch));
  }

  private async writeBatch(batch: HeldChunk[]): Promise<void> {
    const started = performance.now();
    const written = await retryPostgres(() => this.write(batch), {
      wait: (ms) => this.waitHolding(ms, batch),
      onFailure: (err) => {
        this.stats.failures++;
        this.postgresFailures.failed(err);
      },
    });
    this.postgresFailures.succeeded();
    const { attempts } = written;
    if (!written.ok) {
      // Never seen in practice (the bytes are opaque); if it happens, say which and go on.
      for (const held of batch) {
        this.options.log?.error(
          { err: written.refused, session: held.place.session, chunk: held.chunk.chunk },
          'raw chunk refused by Postgres dropped',
        );
        held.msg.term();
        this.options.onDropped?.({ bytes: held.chunk.data.length });
      }
      return;
    }
    const { chunks: stored, bytes } = written.value;
    for (const held of batch) held.msg.ack();
    this.stats.batches++;
    this.stats.chunks += batch.length;
    this.stats.stored += stored;
    this.stats.bytes += bytes;
    this.options.onBatch?.({ chunks: batch.length, stored, bytes, ms: performance.now() - started, attempts });
  }

  /** Waits before a retry, holding the chunks being written and those waiting. */
  private waitHolding(ms: number, batch: HeldChunk[]): Promise<void> {
    return waitHolding(ms, this.options.ackWaitMs ?? storageDefaults.ackWaitMs, () =>
      [...batch, ...this.pending].map((held) => held.msg),
    );
  }

  private async write(batch: HeldChunk[]) {
    const bySession = new Map<
      string,
      { place: SessionPlace; chunks: LinkChunk[]; settings: Record<string, unknown> | undefined }
    >();
    for (const held of batch) {
      let group = bySession.get(held.place.session);
      if (!group) bySession.set(held.place.session, (group = { place: held.place, chunks: [], settings: undefined }));
      group.chunks.push(held.chunk);
      group.settings ??= held.settings;
    }
    const sessions = [...bySession.keys()].sort(compareText);
    await this.registry.ensure(
      this.options.db,
      sessions.map((session) => bySession.get(session)!.place),
    );
    const newlyKnown: Array<() => void> = [];
    const result = await this.options.db.transaction().execute(async (trx) => {
      // Every session row this batch updates, locked first and in one order.
      await lockSessions(trx, sessions);
      for (const session of sessions) {
        const group = bySession.get(session)!;
        // Kept with the bytes: a re-decode lays them over the link's settings as the decoder did.
        if (group.settings && !this.settingsKept.has(session)) {
          await setSessionLinkSettings(trx, session, group.settings);
          newlyKnown.push(() => {
            if (this.settingsKept.size >= 10_000) this.settingsKept.clear();
            this.settingsKept.add(session);
          });
        }
      }
      const groups: SessionLinkChunks[] = sessions.map((session) => ({
        session,
        chunks: bySession.get(session)!.chunks,
      }));
      return insertLinkChunks(trx, groups);
    });
    for (const f of newlyKnown) f();
    return result;
  }
}
