import type { JsMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import {
  type Bus,
  consumeInOrder,
  ensureRecordConsumers,
  isStreamFullError,
  type LinkAddress,
  type OrderedConsumerHandle,
  publishRecordBatch,
  readRawChunkMeta,
  watchLinksStarted,
} from '@tracehub/bus';
import {
  Backoff,
  bucketKeySubject,
  bucketStream,
  type ChunkContext,
  type JsonValue,
  type Log,
  NOT_CODEC_LINK_SETTINGS,
  type Protocol,
  type RecordBatch,
  RecordName,
  silentLog,
  type TraceDecoder,
  type TraceRecord,
  toTraceRecord,
} from '@tracehub/contracts';
import { CheckpointConflictError, CheckpointStore, type DecoderCheckpoint } from './checkpoints.js';
import { LinkLease, leaseKey } from './lease.js';
import { WorkerMembership } from './membership.js';

/** Per-link codec settings (STP version, endianness map, output protocol, QS sizes...). */
export type LinkSettings = { [key: string]: JsonValue };

export interface DecoderFactory {
  create(link: LinkAddress, settings: LinkSettings): TraceDecoder;
  restore(link: LinkAddress, settings: LinkSettings, snapshot: JsonValue): TraceDecoder;
  /**
   * A decoder for a link's next session that keeps what the codec carries across reconnects
   * (QS: the target configuration and dictionaries, as qspy keeps them), from the previous
   * session's last snapshot. Without it every session starts from nothing.
   */
  continueFrom?(link: LinkAddress, settings: LinkSettings, previous: JsonValue): TraceDecoder;
}

/** What the worker did with one raw chunk; services turn it into metrics. */
export interface ChunkDecoded {
  link: LinkAddress;
  bytes: number;
  records: number;
  errors: number;
  gaps: number;
  lostBytes: number;
  decodeMs: number;
  totalMs: number;
}

export interface DecoderWorkerOptions {
  bus: Bus;
  protocols: Protocol[];
  /** Unique per process: written into the leases it holds. */
  workerId: string;
  factory: DecoderFactory;
  /** Settings of a link, read when a session starts (default: none). */
  linkSettings?: (link: LinkAddress) => Promise<LinkSettings>;
  /** How often held leases are refreshed and new links looked for, ms (well under the lease TTL). */
  tickMs?: number;
  /** How long a delivered chunk may stay unacked before it is delivered again, ms. */
  ackWaitMs?: number;
  log?: Log;
  onChunk?: (info: ChunkDecoded) => void;
  /** A record publish refused (`full`: the record stream is full) or failing; the link holds its chunk. */
  onRefused?: (info: { link: LinkAddress; full: boolean }) => void;
  /** Longest wait between two tries of a refused publish, ms (the wait doubles from 100 up to it). */
  maxHoldBackoffMs?: number;
}

/** Sessions a link remembers as closed, so a late chunk of one is never decoded into a new state. */
const CLOSED_SESSIONS_KEPT = 8;
/** How long a link idle and unleased still counts among the links the workers share, ms. */
const LINK_MEMORY_MS = 10 * 60_000;

interface LinkCheckpoint extends DecoderCheckpoint {
  settings: LinkSettings;
  closedSessions: string[];
}

/**
 * A decoder worker: finds links on the raw stream, leases some, decodes each leased link's
 * chunks in order, publishes their records, checkpoints, then acks. Several workers share the
 * links; when one dies its leases expire and the others resume from the checkpoints, so per
 * link every chunk is decoded exactly once into the output (re-publishes are de-duplicated).
 */
export class DecoderWorker {
  private readonly links = new Map<string, LinkDecoding>();
  /** Links of our protocols seen lately (waiting, leased or held), with when: the links shared out. */
  private readonly knownLinks = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private leaseKv!: KV;
  private checkpoints!: CheckpointStore;
  private membership!: WorkerMembership;
  private leaseTtlMs = 0;
  private running = false;
  private ticking: Promise<void> = Promise.resolve();
  /** A tick asked for by a link-started notice and not yet run. */
  private tickAsked = false;
  private startedWatch: { stop(): void } | undefined;
  private readonly log: Log;

  constructor(private readonly options: DecoderWorkerOptions) {
    this.log = options.log ?? silentLog;
  }

  /** The last tick's view: workers of the group alive, links among them, and this worker's share. */
  share = { workers: 1, links: 0, share: 0 };

  /** Links this worker holds now. */
  heldLinks(): LinkAddress[] {
    return [...this.links.values()].map((l) => l.link);
  }

  /** Links whose records the record stream refuses now: each holds its chunk until it accepts. */
  heldBackLinks(): LinkAddress[] {
    return [...this.links.values()].filter((l) => l.holding).map((l) => l.link);
  }

  async start(): Promise<void> {
    // Storage's consumer must exist before a record is published: the stream keeps a
    // message only for the consumers that want it.
    await ensureRecordConsumers(this.options.bus);
    this.leaseKv = await LinkLease.openBucket(this.options.bus);
    this.leaseTtlMs = (await this.leaseKv.status()).ttl;
    this.checkpoints = await CheckpointStore.open(this.options.bus);
    this.membership = new WorkerMembership(
      this.leaseKv,
      this.options.bus.jsm,
      this.options.bus.names.leaseBucket,
      this.options.protocols,
      this.options.workerId,
    );
    this.running = true;
    // A link whose session starts is claimed at once, not at the next tick: its first
    // records come as soon as later ones do.
    this.startedWatch = watchLinksStarted(this.options.bus, this.options.protocols, (link) => {
      if (this.links.has(leaseKey(link.protocol, link.rig, link.link))) return;
      this.tickSoon();
    });
    await this.tick();
    const every = this.options.tickMs ?? 1000;
    this.timer = setInterval(() => this.tickSoon(), every);
  }

  /** Runs a tick after the one running (if any); asks made meanwhile are one tick. */
  private tickSoon(): void {
    if (this.tickAsked) return;
    this.tickAsked = true;
    this.ticking = this.ticking
      .then(() => {
        this.tickAsked = false;
        return this.tick();
      })
      .catch((err) => this.log.error({ err }, 'worker tick failed'));
  }

  /** Stops consuming, waits for the chunks in flight, and releases every lease at once. */
  async stop(): Promise<void> {
    this.running = false;
    this.startedWatch?.stop();
    if (this.timer) clearInterval(this.timer);
    await this.ticking.catch(() => {});
    await Promise.all([...this.links.values()].map((l) => l.close(true)));
    this.links.clear();
    await this.membership?.leave();
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    const tickStarted = performance.now();
    // Refresh what we hold; a lease we lost means another worker owns the link now.
    for (const [key, decoding] of this.links) {
      if (decoding.ended) {
        // Its consumer stopped under it: give the link back; the next tick claims it afresh.
        this.log.warn({ link: key }, 'link consumer ended; reopening');
        this.links.delete(key);
        await decoding.close(true);
        continue;
      }
      if (!(await decoding.lease.refresh())) {
        this.log.warn({ link: key }, 'lease lost; leaving the link to its new owner');
        this.links.delete(key);
        await decoding.close(false);
      }
    }
    // Each worker takes its fair share of the links: of L links over W workers alive, the
    // first L mod W workers (by member name) take ⌈L/W⌉ and the others ⌊L/W⌋, so no two differ
    // by more than one. The links are those any worker holds, that have chunks waiting, or
    // were seen so lately (a link given back with nothing waiting is idle, not gone). A worker
    // over its share gives the excess back, so one that joins gets links within a tick or two;
    // one under it claims links nobody holds. A worker that leaves releases its leases; one
    // that dies lets them expire; either way the others' shares grow and they take the links.
    const group = await this.membership.heartbeat();
    const waiting = await this.discoverLinks();
    const now = Date.now();
    for (const link of [...waiting, ...(await this.leasedLinks())])
      this.knownLinks.set(leaseKey(link.protocol, link.rig, link.link), now);
    for (const key of this.links.keys()) this.knownLinks.set(key, now);
    for (const [key, seen] of this.knownLinks) if (now - seen > LINK_MEMORY_MS) this.knownLinks.delete(key);
    const links = this.knownLinks.size;
    const workers = group.workers;
    const share = Math.floor(links / workers) + (group.rank < links % workers ? 1 : 0);
    this.share = { workers, links, share };
    if (this.links.size > share) {
      for (const key of [...this.links.keys()].sort().slice(share)) {
        const decoding = this.links.get(key)!;
        this.links.delete(key);
        await decoding.close(true);
        this.log.info({ link: key, workers, links, share }, 'link given back for a fair share');
      }
    }
    for (const link of waiting) {
      if (!this.running || this.links.size >= share) return;
      // Claiming takes a few ms a link; the leases held must be refreshed before they expire,
      // so a tick claims for at most one tick's time and the next goes on.
      if (performance.now() - tickStarted > (this.options.tickMs ?? 1000)) return;
      const key = leaseKey(link.protocol, link.rig, link.link);
      if (this.links.has(key)) continue;
      const lease = new LinkLease(this.leaseKv, key, this.options.workerId, this.leaseTtlMs);
      if (!(await lease.claim())) continue;
      const decoding = new LinkDecoding(this.options, this.checkpoints, link, lease, this.log, this.leaseTtlMs / 3);
      try {
        await decoding.open();
        this.links.set(key, decoding);
        this.log.info({ link: key }, 'link claimed');
      } catch (err) {
        this.log.error({ err, link: key }, 'could not start decoding a claimed link; releasing it');
        await decoding.close(true);
      }
    }
  }

  /**
   * Links of our protocols with an entry in the lease bucket: held, or released less than a
   * TTL ago (read from the bucket's stream state in one request).
   */
  private async leasedLinks(): Promise<LinkAddress[]> {
    const { bus } = this.options;
    const bucket = bus.names.leaseBucket;
    const found: LinkAddress[] = [];
    for (const protocol of this.options.protocols) {
      const keys = bucketKeySubject(bucket, `${protocol}.`);
      const info = await bus.jsm.streams.info(bucketStream(bucket), { subjects_filter: `${keys}*.*` });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const [rig, link] = subject.slice(keys.length).split('.');
        if (rig && link) found.push({ protocol, rig, link });
      }
    }
    return found;
  }

  /** Every link that has raw chunks on the stream, for our protocols. */
  private async discoverLinks(): Promise<LinkAddress[]> {
    const { bus } = this.options;
    const found: LinkAddress[] = [];
    for (const protocol of this.options.protocols) {
      const info = await bus.jsm.streams.info(bus.names.rawStream, { subjects_filter: bus.names.rawFilter(protocol) });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const parsed = bus.names.parseSubject(subject);
        if (parsed?.kind === 'raw') found.push({ protocol: parsed.protocol, rig: parsed.rig, link: parsed.link });
      }
    }
    return found;
  }
}

/** The decoding of one leased link. */
class LinkDecoding {
  private consumer: OrderedConsumerHandle | undefined;
  /** True once the consumer ended on its own (not through close()), or the checkpoint moved under us: reopen. */
  ended = false;
  /** True while the record stream refuses this link's records (or NATS is away): the chunk is held. */
  holding = false;
  private closing = false;
  private wakeHold: (() => void) | undefined;
  private checkpoint: LinkCheckpoint | undefined;
  private revision = 0;
  private decoder: TraceDecoder | undefined;

  constructor(
    private readonly options: DecoderWorkerOptions,
    private readonly store: CheckpointStore,
    readonly link: LinkAddress,
    readonly lease: LinkLease,
    private readonly log: Log,
    /** How long the lease must still be certainly ours to go on with a chunk, ms. */
    private readonly leaseMarginMs = 1000,
  ) {}

  /**
   * Throws unless the lease is certainly ours for a while yet. Checked before a chunk is
   * decoded, before its records are published and before its checkpoint is written: a worker
   * whose refreshes fail stops before its lease can expire, so a worker that claims the link
   * next never decodes beside it (from a checkpoint the first is about to move).
   */
  private assertLeaseCurrent(): void {
    if (!this.lease.current(this.leaseMarginMs)) throw new LeaseNotCurrentError(this.key);
  }

  private get key(): string {
    return this.lease.key;
  }

  async open(): Promise<void> {
    const { checkpoint, revision } = await this.store.get(this.key);
    this.checkpoint = checkpoint as LinkCheckpoint | undefined;
    this.revision = revision;
    this.decoder = undefined;
    const { bus } = this.options;
    const { protocol, rig, link } = this.link;
    this.consumer = await consumeInOrder(
      bus,
      {
        stream: bus.names.rawStream,
        durable: bus.names.decoderConsumer(this.link),
        filterSubject: bus.names.rawSubject(protocol, rig, link),
        ackWaitMs: this.options.ackWaitMs ?? 5000,
      },
      (msg) => this.handle(msg),
      (err) => {
        // The decoder may have consumed part of the chunk: continue from the checkpoint.
        this.decoder = undefined;
        if (err instanceof CheckpointConflictError) {
          // Someone else wrote the link's checkpoint: what this worker holds is stale. It
          // decodes nothing more; the next tick reopens the link from the stored checkpoint
          // (or leaves it to the worker that owns it now).
          if (!this.ended) this.log.warn({ err, link: this.key }, 'checkpoint written by another worker; reopening');
          this.ended = true;
          return;
        }
        if (this.ended) return; // refused while the link waits to be reopened
        if (err instanceof LeaseNotCurrentError) {
          this.log.warn({ link: this.key }, 'lease not refreshed in time; the chunk waits');
          return;
        }
        this.log.error({ err, link: this.key }, 'chunk failed; it will be delivered again');
      },
      (err) => {
        if (err) this.log.warn({ err, link: this.key }, 'link consumer ended');
        this.ended = true;
      },
    );
  }

  async close(release: boolean): Promise<void> {
    this.closing = true;
    this.wakeHold?.();
    await this.consumer?.stop();
    this.consumer = undefined;
    if (release) await this.lease.release();
  }

  private async handle(msg: JsMsg): Promise<void> {
    if (this.ended) throw new Error(`link ${this.key} is being reopened; the chunk waits for it`);
    this.assertLeaseCurrent();
    const started = performance.now();
    const meta = readRawChunkMeta(msg.headers);
    let cp = this.checkpoint;
    if (cp && cp.session === meta.session && meta.chunk <= cp.lastChunk) return; // done before a crash
    if (cp?.closedSessions.includes(meta.session) || (cp?.session === meta.session && cp.ended)) {
      this.log.warn({ link: this.key, session: meta.session, chunk: meta.chunk }, 'chunk of a closed session dropped');
      return;
    }
    if (cp && cp.session !== meta.session && !cp.ended) {
      // The previous session ended without its end-of-stream chunk (the gateway died).
      await this.closeSession(cp, meta.recvNs);
      cp = this.checkpoint;
    }
    let nextSeq: number;
    let settings: LinkSettings;
    if (!cp || cp.session !== meta.session) {
      // The stored settings, with what the gateway was told for this session over them.
      settings = {
        ...(this.options.linkSettings ? await this.options.linkSettings(this.link) : {}),
        ...(meta.settings as LinkSettings | undefined),
      };
      try {
        this.decoder = meta.capture
          ? this.options.factory.create(this.link, settings)
          : this.nextSessionDecoder(cp, settings);
      } catch (err) {
        // Settings the codec refuses must not stop the link for good: decode with the defaults.
        this.log.error({ err, link: this.key, settings }, 'link settings refused; decoding with defaults');
        settings = {};
        this.decoder = this.options.factory.create(this.link, settings);
      }
      nextSeq = 0;
    } else {
      settings = cp.settings;
      this.decoder ??= this.options.factory.restore(this.link, settings, cp.state);
      nextSeq = cp.nextSeq;
    }
    const decoder = this.decoder;
    const records: TraceRecord[] = [];
    let errors = 0;
    let gaps = 0;
    const place = { ...this.link, session: meta.session, chunk: meta.chunk, hostNs: meta.recvNs, seq: 0 };
    const emit = (r: Parameters<Parameters<TraceDecoder['push']>[2]>[0]) => {
      if (r.kind === 'error') {
        errors++;
        if (r.name === RecordName.SEQ_GAP) gaps++;
      }
      place.seq = nextSeq++;
      records.push(toTraceRecord(r, place));
    };
    const ctx: ChunkContext = { hostNs: meta.recvNs, lostBytes: meta.lost };
    if (meta.pauseNs !== undefined) ctx.pauseNs = meta.pauseNs;
    const decodeStart = performance.now();
    if (msg.data.length > 0 || meta.lost > 0) decoder.push(msg.data, ctx, emit);
    if (meta.eos) decoder.end(ctx, emit);
    const decodeMs = performance.now() - decodeStart;
    const batch: RecordBatch = {
      ...this.link,
      session: meta.session,
      chunk: meta.chunk,
      hostNs: meta.recvNs.toString(),
      eos: meta.eos,
      records,
    };
    if (meta.eos) batch.sessionRecordCount = nextSeq;
    await this.publishHolding(batch);
    const closedSessions = cp?.closedSessions ?? [];
    await this.saveCheckpoint({
      session: meta.session,
      lastChunk: meta.chunk,
      nextSeq,
      ended: meta.eos,
      state: decoder.snapshot(),
      settings,
      closedSessions: meta.eos ? remember(closedSessions, meta.session) : closedSessions,
    });
    this.options.onChunk?.({
      link: this.link,
      bytes: msg.data.length,
      records: records.length,
      errors,
      gaps,
      lostBytes: meta.lost,
      decodeMs,
      totalMs: performance.now() - started,
    });
  }

  /**
   * The decoder of a new session: continued from the link's previous session when the codec
   * can and the settings are the same (changed settings are a fresh start, as after a fix).
   */
  private nextSessionDecoder(previous: LinkCheckpoint | undefined, settings: LinkSettings): TraceDecoder {
    const { factory } = this.options;
    if (factory.continueFrom && previous?.state !== undefined && sameSettings(previous.settings, settings)) {
      return factory.continueFrom(this.link, settings, previous.state);
    }
    return factory.create(this.link, settings);
  }

  /** Ends a session whose end-of-stream chunk never came, as chunk lastChunk+1. */
  private async closeSession(cp: LinkCheckpoint, hostNs: bigint): Promise<void> {
    const decoder = this.decoder ?? this.options.factory.restore(this.link, cp.settings, cp.state);
    const chunk = cp.lastChunk + 1;
    let nextSeq = cp.nextSeq;
    const records: TraceRecord[] = [];
    const place = { ...this.link, session: cp.session, chunk, hostNs, seq: 0 };
    decoder.end({ hostNs }, (r) => {
      place.seq = nextSeq++;
      records.push(toTraceRecord(r, place));
    });
    await this.publishHolding({
      ...this.link,
      session: cp.session,
      chunk,
      hostNs: hostNs.toString(),
      eos: true,
      sessionRecordCount: nextSeq,
      records,
    });
    await this.saveCheckpoint({
      ...cp,
      lastChunk: chunk,
      nextSeq,
      ended: true,
      state: decoder.snapshot(),
      closedSessions: remember(cp.closedSessions, cp.session),
    });
    this.decoder = undefined;
  }

  /**
   * Publishes the records of a chunk, and while the record stream refuses them (full: storage
   * is behind or Postgres away) or NATS does not answer, keeps trying with a doubling wait.
   * The chunk stays unacknowledged meanwhile (its consumer keeps it ours), so the link takes
   * no further chunks: they wait on the raw stream, and when that is full, at the gateway.
   * Parts that were accepted before a refusal are de-duplicated when sent again.
   */
  private async publishHolding(batch: RecordBatch): Promise<void> {
    const backoff = new Backoff({ fromMs: 100, maxMs: this.options.maxHoldBackoffMs ?? 5000 });
    let consumersChecked = true;
    for (;;) {
      try {
        // NATS may have come back without storage's consumer.
        if (!consumersChecked) await ensureRecordConsumers(this.options.bus);
        consumersChecked = true;
        this.assertLeaseCurrent();
        await publishRecordBatch(this.options.bus, batch);
        if (this.holding) {
          this.holding = false;
          this.log.info(
            { link: this.key, session: batch.session, chunk: batch.chunk },
            'record stream accepting again',
          );
        }
        return;
      } catch (err) {
        if (this.closing || err instanceof LeaseNotCurrentError) throw err;
        const full = isStreamFullError(err);
        if (!full) consumersChecked = false;
        this.options.onRefused?.({ link: this.link, full });
        if (!this.holding) {
          this.holding = true;
          this.log.warn(
            { err, link: this.key, session: batch.session, chunk: batch.chunk },
            full ? 'record stream full (storage behind); holding the link' : 'records not published; holding the link',
          );
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoff.next());
          this.wakeHold = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeHold = undefined;
      }
    }
  }

  private async saveCheckpoint(cp: LinkCheckpoint): Promise<void> {
    this.assertLeaseCurrent();
    this.revision = await this.store.put(this.key, cp, this.revision);
    this.checkpoint = cp;
  }
}

/** The same codec settings (settings of other consumers, such as the PalmTrace ids, left out). */
function sameSettings(a: LinkSettings, b: LinkSettings): boolean {
  const canonical = (s: LinkSettings) =>
    JSON.stringify(
      Object.entries(s)
        .filter(([name]) => !NOT_CODEC_LINK_SETTINGS.includes(name))
        .sort(([x], [y]) => (x < y ? -1 : 1)),
    );
  return canonical(a) === canonical(b);
}

function remember(list: string[], session: string): string[] {
  return [...list.filter((s) => s !== session), session].slice(-CLOSED_SESSIONS_KEPT);
}

/** The worker can no longer be sure it holds the link's lease: it stops decoding the link. */
class LeaseNotCurrentError extends Error {
  override name = 'LeaseNotCurrentError';
  constructor(key: string) {
    super(`the lease on ${key} was not refreshed in time: another worker may take the link`);
  }
}
