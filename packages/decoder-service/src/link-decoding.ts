import type { JsMsg } from '@nats-io/jetstream';
import {
  consumeLinkChunks,
  ensureRecordConsumers,
  isStreamFullError,
  type LinkAddress,
  type LinkChunksHandle,
  nextChunkFrom,
  type PreparedRecordBatch,
  prepareRecordBatch,
  readRawChunkMeta,
  sendRecordBatch,
} from '@tracehub/bus';
import {
  Backoff,
  type BatchRecord,
  chunkPieces,
  type Log,
  NOT_CODEC_LINK_SETTINGS,
  type RawChunkMeta,
  type RecordBatch,
  RecordName,
  type TraceDecoder,
  toBatchRecord,
} from '@tracehub/contracts';
import { CheckpointConflictError, type CheckpointStore, type DecoderCheckpoint } from './checkpoints.js';
import { DecodeTurns } from './decode-turns.js';
import type { LinkLease } from './lease.js';
import type { DecoderWorkerOptions, LinkSettings } from './types.js';

/**
 * Chunks decoded before their records are published: a busy link's step decodes a few and
 * publishes them together. Decoding every chunk in flight first (64 of 16 KiB) held some
 * 30 000 records' objects at once: the one-link bench's decoder peaked at 502 MB, 327 MB with
 * four a step.
 */
const CHUNKS_A_STEP = 4;

/** Sessions a link remembers as closed, so a late chunk of one is never decoded into a new state. */
const CLOSED_SESSIONS_KEPT = 8;

/** What a link's checkpoint holds beyond the codec's state. */
export interface LinkCheckpoint extends DecoderCheckpoint {
  settings: LinkSettings;
  closedSessions: string[];
  /** Raw stream sequence of the chunk `lastChunk` (absent in checkpoints of earlier versions). */
  streamSeq?: number;
}

/** How a link is decoded: the worker's options with its timing. */
export interface LinkDecodingOptions extends DecoderWorkerOptions {
  /** How long decoded chunks may wait for their checkpoint (and their acknowledgement), ms. */
  checkpointMs: number;
  /** Chunks delivered ahead of their acknowledgement, at most. */
  maxInFlight: number;
  /** Turns at decoding shared with the worker's other links (none given: this link's own). */
  turns?: DecodeTurns;
}

/** A chunk delivered (or read from the stream), with its headers read once. */
interface Delivered {
  /** The delivery to acknowledge; none for a chunk read from the stream. */
  msg: JsMsg | undefined;
  meta: RawChunkMeta;
  data: Uint8Array;
  seq: number;
  /** performance.now() when it came (to keep it from being delivered again while held). */
  since: number;
}

/**
 * A record batch to publish, laid out for the bus as soon as its chunk is decoded, with the
 * chunk it came from (for the metrics).
 */
interface Outgoing {
  prepared: PreparedRecordBatch;
  chunk?: { bytes: number; errors: number; gaps: number; lost: number; decodeMs: number; started: number };
}

/**
 * The decoding of one leased link. Chunks are delivered ahead of their acknowledgement (up to
 * `maxInFlight`); whatever has come is decoded at once, its records published (one message a
 * chunk, so a re-decode is de-duplicated), and every `checkpointMs` the codec's state is
 * written and the chunks it covers acknowledged together. A worker that dies leaves its
 * unacknowledged chunks to be delivered again to the next holder, which decodes them again
 * from the checkpoint; their records are published again under the same ids and JetStream
 * drops the repeats. Chunks delivered again can come after later ones: a chunk is decoded only
 * when it is the next of its link on the stream, otherwise it is held until the ones before
 * it have come.
 */
export class LinkDecoding {
  private handle: LinkChunksHandle | undefined;
  /** Delivered and not yet decoded, by stream sequence. */
  private waiting: Delivered[] = [];
  /** Decoded and published; acknowledged once a checkpoint covers them. */
  private decoded: Delivered[] = [];
  /** True once delivery ended on its own, or the checkpoint moved under us: reopen. */
  ended = false;
  /** True while the record stream refuses this link's records (or NATS is away): the chunks are held. */
  holding = false;
  private closing = false;
  private wakeHold: (() => void) | undefined;
  private wakeLoop: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** The checkpoint last written, and its revision. */
  private saved: LinkCheckpoint | undefined;
  private revision = 0;
  private savedAt = 0;
  /** Where decoding stands now (the next checkpoint, the codec's state aside). */
  private work: LinkCheckpoint | undefined;
  private decoder: TraceDecoder | undefined;
  /** Stream sequence up to which the link's consumer had acknowledged every chunk when this holder began. */
  private ackFloorSeq = 0;
  private readonly turns: DecodeTurns;

  constructor(
    private readonly options: LinkDecodingOptions,
    private readonly store: CheckpointStore,
    readonly link: LinkAddress,
    readonly lease: LinkLease,
    private readonly log: Log,
    /** How long the lease must still be certainly ours to go on, ms. */
    private readonly leaseMarginMs = 1000,
  ) {
    this.turns = options.turns ?? new DecodeTurns();
  }

  private get key(): string {
    return this.lease.key;
  }

  /**
   * Throws unless the lease is certainly ours for a while yet. Checked before chunks are
   * decoded, before their records are published and before a checkpoint is written: a worker
   * whose refreshes fail stops before its lease can expire, so a worker that claims the link
   * next never decodes beside it. When the worker's own refresh is late (its tick waits behind
   * a busy event loop), the lease is refreshed here first: a refresh that succeeds proves nobody
   * took the link meanwhile. Without it a busy worker dropped its links (decoded chunks to be
   * decoded again, consumers made anew), which made it busier still.
   */
  private async assertLeaseCurrent(): Promise<void> {
    if (this.lease.current(this.leaseMarginMs)) return;
    if ((await this.lease.refresh()) && this.lease.current(this.leaseMarginMs)) return;
    throw new LeaseNotCurrentError(this.key);
  }

  async open(): Promise<void> {
    const { checkpoint, revision } = await this.store.get(this.key);
    this.saved = checkpoint as LinkCheckpoint | undefined;
    this.work = this.saved && { ...this.saved };
    this.revision = revision;
    this.savedAt = performance.now();
    this.decoder = undefined;
    this.handle = await consumeLinkChunks(
      this.options.bus,
      this.link,
      { ackWaitMs: this.options.ackWaitMs ?? 5000, maxInFlight: this.options.maxInFlight },
      (msg) => this.deliver(msg),
    );
    this.ackFloorSeq = this.handle.start.ackFloorSeq;
    void this.handle.ended.then((err) => {
      if (this.closing) return;
      if (err) this.log.warn({ err, link: this.key }, 'link consumer ended');
      this.ended = true;
      this.wakeLoop?.();
    });
    this.loop = this.run();
  }

  /**
   * Stops decoding. With `release` (the link given back, the worker stopping), what was
   * decoded is checkpointed and acknowledged first, so the next holder starts where this one
   * stopped; chunks not decoded are handed back (nak'd in stream order, delivered again first).
   */
  async close(release: boolean): Promise<void> {
    this.closing = true;
    this.wakeHold?.();
    this.wakeLoop?.();
    await this.loop;
    await this.handle?.stop();
    this.handle = undefined;
    if (release && !this.ended && this.decoded.length > 0) {
      try {
        await this.checkpoint();
      } catch (err) {
        this.log.warn({ err, link: this.key }, 'could not checkpoint the link on close; the next holder decodes again');
      }
    }
    this.handBack();
    if (release) await this.lease.release();
  }

  /** Keeps chunks held for a while from being delivered again (a slow publish, a wait for an earlier chunk). */
  keepHeld(olderThanMs: number): void {
    const now = performance.now();
    for (const d of this.waiting) if (now - d.since > olderThanMs) d.msg?.working();
    for (const d of this.decoded) if (now - d.since > olderThanMs) d.msg?.working();
  }

  private deliver(msg: JsMsg): void {
    let meta: RawChunkMeta;
    try {
      meta = readRawChunkMeta(msg.headers);
    } catch (err) {
      // Not a chunk of the bus contract: nothing can decode it, and holding it would stop the link.
      this.log.error({ err, link: this.key }, 'raw message without valid chunk headers dropped');
      msg.term();
      return;
    }
    const seq = msg.info.streamSequence;
    const d: Delivered = { msg, meta, data: msg.data, seq, since: performance.now() };
    // Usually in order: appended; a chunk delivered again after later ones goes to its place.
    const last = this.waiting.at(-1);
    if (!last || last.seq < seq) this.waiting.push(d);
    else {
      const at = this.waiting.findIndex((w) => w.seq >= seq);
      if (this.waiting[at]?.seq === seq) this.waiting[at] = d;
      else this.waiting.splice(at, 0, d);
    }
    this.wakeLoop?.();
  }

  private async run(): Promise<void> {
    while (!this.closing && !this.ended) {
      try {
        await this.step();
      } catch (err) {
        // Whatever was decoded and not checkpointed is decoded again from the checkpoint.
        this.ended = true;
        if (err instanceof CheckpointConflictError)
          this.log.warn({ err, link: this.key }, 'checkpoint written by another worker; reopening');
        else if (err instanceof LeaseNotCurrentError)
          this.log.warn({ link: this.key }, 'lease not refreshed in time; the link waits');
        else if (!this.closing) this.log.error({ err, link: this.key }, 'chunks failed; they will be delivered again');
        return;
      }
      if (this.closing || this.ended) return;
      const due = this.decoded.length > 0 ? this.savedAt + this.options.checkpointMs - performance.now() : Infinity;
      if (this.waiting.length > 0) continue;
      if (due <= 0) continue;
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(due) ? setTimeout(resolve, due) : undefined;
        this.wakeLoop = () => {
          if (timer) clearTimeout(timer);
          resolve();
        };
      });
      this.wakeLoop = undefined;
    }
  }

  /** Decodes what has come, publishes its records, and checkpoints when it is time. */
  private async step(): Promise<void> {
    const outgoing: Outgoing[] = [];
    const taken: Delivered[] = [];
    while (this.waiting.length > 0 && !this.closing && outgoing.length < CHUNKS_A_STEP) {
      const d = this.waiting[0];
      const place = await this.placeOf(d);
      if (typeof place === 'object') {
        // An earlier chunk of the link has not come (a previous holder's, delivered again
        // only after its ack wait): it is decoded from the stream now, and its delivery
        // acknowledged later as decoded before.
        await this.assertLeaseCurrent();
        await this.decodeChunk(place, outgoing);
        continue;
      }
      this.waiting.shift();
      if (place === 'closed') {
        this.log.warn(
          { link: this.key, session: d.meta.session, chunk: d.meta.chunk },
          'chunk of a closed session dropped',
        );
        d.msg?.ack();
        continue;
      }
      if (place === 'done') {
        // Decoded before: acknowledged once the checkpoint that covers it is written.
        if (this.saved && this.saved.session === d.meta.session && d.meta.chunk <= this.saved.lastChunk) d.msg?.ack();
        else taken.push(d);
        continue;
      }
      await this.assertLeaseCurrent();
      await this.decodeChunk(d, outgoing);
      taken.push(d);
    }
    if (outgoing.length > 0) await this.publish(outgoing);
    this.decoded.push(...taken);
    const full = this.decoded.length >= this.options.maxInFlight / 2;
    const ends = taken.some((d) => d.meta.eos);
    if (this.decoded.length > 0 && (full || ends || performance.now() - this.savedAt >= this.options.checkpointMs))
      await this.checkpoint();
  }

  /**
   * Where a delivered chunk stands: decoded before (`done`), of a session already closed
   * (`closed`), the next to decode (`next`), or behind an earlier chunk of the link that has
   * not come (a previous holder's, delivered again only after its ack wait): that chunk, read
   * from the stream.
   */
  private async placeOf(d: Delivered): Promise<'done' | 'closed' | 'next' | Delivered> {
    const quick = this.quickPlace(d.meta.session, d.meta.chunk);
    if (quick !== undefined) return quick;
    // A new session, or a gap: the stream says which chunk of the link comes next.
    let from = Math.max(this.work?.streamSeq ?? 0, this.ackFloorSeq) + 1;
    // At or before where this link's decoding (or its acknowledgements) stand: decoded before.
    if (d.seq < from) return 'done';
    for (;;) {
      if (from >= d.seq) return 'next';
      const found = await nextChunkFrom(this.options.bus, this.link, from);
      if (!found || found.seq >= d.seq) return 'next';
      let meta: RawChunkMeta;
      try {
        meta = readRawChunkMeta(found.headers);
      } catch {
        from = found.seq + 1;
        continue;
      }
      const place = this.quickPlace(meta.session, meta.chunk);
      // An earlier chunk still to decode: it goes first.
      if (place === undefined || place === 'next')
        return { msg: undefined, meta, data: found.data, seq: found.seq, since: performance.now() };
      from = found.seq + 1;
    }
  }

  /** The place of a chunk that its session and index alone tell; undefined when the stream must say. */
  private quickPlace(session: string, chunk: number): 'done' | 'closed' | 'next' | undefined {
    const cp = this.work;
    if (!cp) return undefined;
    if (cp.session === session) {
      if (chunk <= cp.lastChunk) return 'done';
      if (cp.ended) return 'closed';
      return chunk === cp.lastChunk + 1 ? 'next' : undefined;
    }
    if (cp.closedSessions.includes(session)) return 'closed';
    return undefined;
  }

  /** Decodes one chunk into `outgoing` (after the end of the session before it, when that never came). */
  private async decodeChunk(d: Delivered, outgoing: Outgoing[]): Promise<void> {
    const started = performance.now();
    // A new session's stored settings are read before the turn is taken: no link waits on
    // another's round trip to Postgres.
    const newSession = !this.work || this.work.session !== d.meta.session;
    const stored = newSession && this.options.linkSettings ? await this.options.linkSettings(this.link) : {};
    const wait = this.turns.take(Number(d.meta.recvNs / 1000n));
    if (wait) await wait;
    try {
      this.decodeInTurn(d, outgoing, started, stored);
    } finally {
      this.turns.done();
    }
  }

  /** Decodes a chunk (its turn taken) and lays its batch out; `stored`: a new session's stored settings. */
  private decodeInTurn(d: Delivered, outgoing: Outgoing[], started: number, stored: LinkSettings): void {
    const { meta } = d;
    let cp = this.work;
    if (cp && cp.session !== meta.session && !cp.ended) {
      // The previous session ended without its end-of-stream chunk (the gateway died).
      const closing = this.closeSession(cp, meta.recvNs);
      outgoing.push({ prepared: prepareRecordBatch(closing) });
      cp = this.work;
    }
    let settings: LinkSettings;
    let nextSeq: number;
    if (!cp || cp.session !== meta.session) {
      // The stored settings, with what the gateway was told for this session over them.
      settings = {
        ...stored,
        ...(meta.settings as LinkSettings | undefined),
      };
      const previousState = cp ? this.stateNow(cp) : undefined;
      try {
        this.decoder = meta.capture
          ? this.options.factory.create(this.link, settings)
          : this.nextSessionDecoder(cp, previousState, settings);
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
    const records: BatchRecord[] = [];
    let errors = 0;
    let gaps = 0;
    const place = { ...this.link, session: meta.session, chunk: meta.chunk, hostNs: meta.recvNs, seq: 0 };
    const emit = (r: Parameters<Parameters<TraceDecoder['push']>[2]>[0]) => {
      if (r.kind === 'error') {
        errors++;
        if (r.name === RecordName.SEQ_GAP) gaps++;
      }
      place.seq = nextSeq++;
      records.push(toBatchRecord(r, place));
    };
    const decodeStart = performance.now();
    // A stretch at a time, each after its pause and with its own receive time (STP v1).
    const pieces = chunkPieces(d.data, meta, decoder);
    if (d.data.length > 0 || meta.lost > 0) {
      for (const piece of pieces) {
        place.hostNs = piece.ctx.hostNs;
        decoder.push(piece.data, piece.ctx, emit);
      }
    }
    if (meta.marker && decoder.mark) decoder.mark(meta.marker, pieces[pieces.length - 1].ctx, emit);
    if (meta.eos) decoder.end(pieces[pieces.length - 1].ctx, emit);
    const decodeMs = performance.now() - decodeStart;
    const batch: RecordBatch<BatchRecord> = {
      ...this.link,
      session: meta.session,
      chunk: meta.chunk,
      hostNs: meta.recvNs.toString(),
      eos: meta.eos,
      records,
    };
    if (meta.eos) batch.sessionRecordCount = nextSeq;
    const closedSessions = cp?.closedSessions ?? [];
    this.work = {
      session: meta.session,
      lastChunk: meta.chunk,
      nextSeq,
      ended: meta.eos,
      // Taken from the decoder when the checkpoint is written.
      state: null,
      settings,
      closedSessions: meta.eos ? remember(closedSessions, meta.session) : closedSessions,
      streamSeq: d.seq,
    };
    outgoing.push({
      prepared: prepareRecordBatch(batch),
      chunk: { bytes: d.data.length, errors, gaps, lost: meta.lost, decodeMs, started },
    });
  }

  /** The codec's state where decoding stands: the decoder's when there is one, else the checkpoint's. */
  private stateNow(cp: LinkCheckpoint): LinkCheckpoint['state'] {
    return this.decoder ? this.decoder.snapshot() : cp.state;
  }

  /**
   * The decoder of a new session: continued from the link's previous session when the codec
   * can and the settings are the same (changed settings are a fresh start, as after a fix).
   */
  private nextSessionDecoder(
    previous: LinkCheckpoint | undefined,
    previousState: LinkCheckpoint['state'] | undefined,
    settings: LinkSettings,
  ): TraceDecoder {
    const { factory } = this.options;
    if (factory.continueFrom && previous && previousState !== undefined && sameSettings(previous.settings, settings)) {
      return factory.continueFrom(this.link, settings, previousState);
    }
    return factory.create(this.link, settings);
  }

  /** Ends a session whose end-of-stream chunk never came, as chunk lastChunk+1. */
  private closeSession(cp: LinkCheckpoint, hostNs: bigint): RecordBatch<BatchRecord> {
    const decoder = this.decoder ?? this.options.factory.restore(this.link, cp.settings, cp.state);
    const chunk = cp.lastChunk + 1;
    let nextSeq = cp.nextSeq;
    const records: BatchRecord[] = [];
    const place = { ...this.link, session: cp.session, chunk, hostNs, seq: 0 };
    decoder.end({ hostNs }, (r) => {
      place.seq = nextSeq++;
      records.push(toBatchRecord(r, place));
    });
    this.decoder = decoder;
    this.work = {
      ...cp,
      lastChunk: chunk,
      nextSeq,
      ended: true,
      closedSessions: remember(cp.closedSessions, cp.session),
    };
    return {
      ...this.link,
      session: cp.session,
      chunk,
      hostNs: hostNs.toString(),
      eos: true,
      sessionRecordCount: nextSeq,
      records,
    };
  }

  /**
   * Publishes the batches in order, sent back to back and their acknowledgements awaited
   * together. While the record stream refuses them (full: storage is behind or Postgres away)
   * or NATS does not answer, keeps trying from the first not accepted with a doubling wait;
   * the chunks stay unacknowledged meanwhile, so the link takes no further chunks beyond
   * `maxInFlight`: they wait on the raw stream, and when that is full, at the gateway.
   * Batches accepted before a refusal are de-duplicated when sent again.
   */
  private async publish(outgoing: Outgoing[]): Promise<void> {
    const backoff = new Backoff({ fromMs: 100, maxMs: this.options.maxHoldBackoffMs ?? 5000 });
    let consumersChecked = true;
    let from = 0;
    while (from < outgoing.length) {
      try {
        // NATS may have come back without storage's consumer.
        if (!consumersChecked) await ensureRecordConsumers(this.options.bus);
        consumersChecked = true;
        await this.assertLeaseCurrent();
        const sent = outgoing.slice(from).map((o) => sendRecordBatch(this.options.bus, o.prepared));
        const results = await Promise.allSettled(sent);
        const failed = results.findIndex((r) => r.status === 'rejected');
        const accepted = failed < 0 ? results.length : failed;
        for (let i = from; i < from + accepted; i++) this.published(outgoing[i]);
        from += accepted;
        if (failed >= 0) throw (results[failed] as PromiseRejectedResult).reason;
        if (this.holding) {
          this.holding = false;
          this.log.info({ link: this.key }, 'record stream accepting again');
        }
      } catch (err) {
        if (this.closing || err instanceof LeaseNotCurrentError) throw err;
        const full = isStreamFullError(err);
        if (!full) consumersChecked = false;
        this.options.onRefused?.({ link: this.link, full });
        if (!this.holding) {
          this.holding = true;
          const { batch } = outgoing[from].prepared;
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

  private published(o: Outgoing): void {
    if (!o.chunk) return;
    this.options.onChunk?.({
      link: this.link,
      bytes: o.chunk.bytes,
      records: o.prepared.batch.records.length,
      errors: o.chunk.errors,
      gaps: o.chunk.gaps,
      lostBytes: o.chunk.lost,
      decodeMs: o.chunk.decodeMs,
      totalMs: performance.now() - o.chunk.started,
    });
  }

  /** Writes where decoding stands, then acknowledges every chunk it covers. */
  private async checkpoint(): Promise<void> {
    const work = this.work;
    if (!work) return;
    await this.assertLeaseCurrent();
    const cp: LinkCheckpoint = { ...work, state: this.stateNow(work) };
    this.revision = await this.store.put(this.key, cp, this.revision);
    this.saved = cp;
    this.work = { ...cp };
    this.savedAt = performance.now();
    for (const d of this.decoded) d.msg?.ack();
    this.decoded = [];
  }

  /** Chunks this holder will not decode go back to the stream, earliest first, for whoever holds the link next. */
  private handBack(): void {
    const all = [...this.decoded, ...this.waiting].sort((a, b) => a.seq - b.seq);
    for (const d of all) d.msg?.nak();
    this.decoded = [];
    this.waiting = [];
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
export class LeaseNotCurrentError extends Error {
  override name = 'LeaseNotCurrentError';
  constructor(key: string) {
    super(`the lease on ${key} was not refreshed in time: another worker may take the link`);
  }
}
