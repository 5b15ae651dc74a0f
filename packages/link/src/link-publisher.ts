import { announceLinkStarted, type Bus, ensureLinkConsumers, isStreamFullError, publishRawChunk } from '@tracehub/bus';
import { Backoff, type ChunkSegment, type LinkAddress, type LinkMarker, type Log } from '@tracehub/contracts';
import { newSessionId, nowNs } from './clock.js';
import type { ConnectionEvent, LinkSink } from './link-source.js';
import { loopStalls } from './loop-stalls.js';

export interface LinkPublisherOptions {
  bus: Bus;
  link: LinkAddress;
  /** A chunk is sealed when it reaches this many bytes... */
  chunkBytes?: number;
  /** ...or this long after its first byte, ms, once it holds `minChunkBytes`... */
  flushMs?: number;
  /**
   * ...which is 0 by default (sealed at `flushMs` whatever it holds). Every chunk costs the
   * same few messages on the bus whatever its size, so a slow link that waits for a few KiB
   * costs its bytes rather than a fixed number of chunks a second.
   */
  minChunkBytes?: number;
  /** ...and in any case this long after its first byte, ms (default: `flushMs`). */
  maxFlushMs?: number;
  /**
   * Bytes held while NATS is away or the raw stream refuses (full); past it the oldest are
   * dropped and reported in th-lost.
   */
  bufferBytes?: number;
  /**
   * When > 0, a read that comes after the link was idle this long (ns) starts a new stretch of
   * the chunk (th-segments: its offset, the idle time before it and its receive time), and
   * every chunk carries the idle time before it (th-pause-ns; 0 when shorter than this: no pause): STP v1 resynchronises on pauses,
   * and its decoder is given the chunk a stretch at a time. Chunks are still sealed by size and
   * age only: a link that pauses often costs no more chunks than one that does not. 0
   * (default) for links whose decoding ignores time.
   */
  pauseMarkNs?: bigint;
  /**
   * Every chunk says the link had no pause before it (th-pause-ns 0), so that its decoder never
   * takes the gaps between chunks' receive times for pauses: a file or stdin replayed has no
   * pauses but the ones its settings describe, whatever the timing of its reads.
   */
  noPauses?: boolean;
  /** Link settings given with the link (TRACEHUB_LINKS, replay flags), sent with every chunk. */
  settings?: Record<string, unknown>;
  /** Every session is a capture of its own (a file replayed): marked so, decoded from nothing. */
  captures?: boolean;
  log?: Log;
  /** Called after every acknowledged chunk (metrics). */
  onPublished?: (info: {
    session: string;
    chunk: number;
    bytes: number;
    lost: number;
    eos: boolean;
    ms: number;
  }) => void;
}

interface QueuedChunk {
  session: string;
  data: Uint8Array;
  recvNs: bigint;
  /** Bytes dropped just before this chunk. */
  lost: number;
  pauseNs?: bigint;
  segments?: ChunkSegment[];
  eos: boolean;
  marker?: LinkMarker;
  chunk?: number;
}

export interface PublisherStats {
  sessions: number;
  bytesIn: number;
  bytesPublished: number;
  bytesDropped: number;
  chunksPublished: number;
  queuedBytes: number;
  /** Publishes that failed because NATS (or the stream) did not answer. */
  publishFailures: number;
  /** Publishes the raw stream refused because it is full (the decoders or storage are behind). */
  publishRefused: number;
  /** True while the head chunk is being refused or failing: the link is buffering. */
  holding: boolean;
  /** Connections refused, replaced or closed for silence (tcp-listen). */
  connections: Record<ConnectionEvent, number>;
}

/**
 * Turns what a link reads into the raw chunks of the bus contract: sessions, chunk indexes,
 * receive times, end-of-session chunks. Reading never waits for NATS: chunks queue up to
 * `bufferBytes`, and past that the oldest are dropped (last-is-best, as on the target) and the
 * count goes out in the next chunk's `th-lost`. One loop publishes in order and retries each
 * chunk until JetStream acknowledges it, so a chunk's index never changes and re-sends are
 * de-duplicated. A raw stream that is full (decoders or storage behind) refuses the chunk;
 * that is handled as NATS being away: the link buffers, then drops, and reports it. This is
 * the only place in the pipeline where data may be dropped.
 *
 * Before the first chunk, and again after any failure, the link's consumers are made sure
 * of: the raw stream keeps a chunk only for consumers that exist when it is published.
 */
export class LinkPublisher implements LinkSink {
  private readonly chunkBytes: number;
  private readonly flushMs: number;
  private readonly minChunkBytes: number;
  private readonly maxFlushMs: number;
  private readonly bufferBytes: number;
  /** `pauseMarkNs` of the options, 0n when pauses are not marked. */
  private readonly pauseMarkNs: bigint;
  private session: string | undefined;
  private connection: { address: string; sinceMs: number } | undefined;
  private pieces: Uint8Array[] = [];
  private pieceBytes = 0;
  private lastRecvNs = 0n;
  /** `loopStalls().stalledNs` at the last read (links that mark pauses). */
  private lastStalledNs = 0n;
  /** The stretches of the chunk being gathered, when pauses are marked (the last one open). */
  private segments: ChunkSegment[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly queue: QueuedChunk[] = [];
  private queuedBytes = 0;
  private readonly nextChunk = new Map<string, number>();
  private wake: (() => void) | undefined;
  private roomWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  private running = true;
  private outage = false;
  /** The link's decoder and storage consumers are known to exist. */
  private consumersReady = false;
  /** Bytes dropped whose session had no later chunk queued yet: they go on its next one. */
  private readonly carriedLost = new Map<string, number>();
  /** The publishing loop, started by the first chunk: a link that never reads holds no loop. */
  private loop: Promise<void> | undefined;
  readonly stats: PublisherStats = {
    sessions: 0,
    bytesIn: 0,
    bytesPublished: 0,
    bytesDropped: 0,
    chunksPublished: 0,
    queuedBytes: 0,
    publishFailures: 0,
    publishRefused: 0,
    holding: false,
    connections: { refused: 0, replaced: 0, 'idle-closed': 0 },
  };
  /** Sessions in the order they started (the CLI prints them). */
  readonly sessions: string[] = [];

  constructor(private readonly options: LinkPublisherOptions) {
    this.chunkBytes = options.chunkBytes ?? 16 * 1024;
    this.flushMs = options.flushMs ?? 20;
    this.minChunkBytes = options.minChunkBytes ?? 0;
    this.maxFlushMs = Math.max(this.flushMs, options.maxFlushMs ?? this.flushMs);
    this.bufferBytes = options.bufferBytes ?? 64 * 1024 * 1024;
    this.pauseMarkNs = options.pauseMarkNs ?? 0n;
  }

  get currentSession(): string | undefined {
    return this.session;
  }

  /** The connection the open session reads from, as the source named it, and since when. */
  get target(): { address: string; sinceMs: number } | undefined {
    return this.connection;
  }

  connected(description: string): void {
    this.beginSession(description, 'new connection');
    this.connection = { address: description, sinceMs: Date.now() };
  }

  /**
   * Names the session the link's next bytes go in. It begins with its first byte: a
   * connection that sends nothing (a port scan, a flood of connects, a target that never
   * talks) publishes nothing and leaves no session behind.
   */
  private beginSession(description: string, endReason: string): void {
    if (this.session) this.endSession(endReason);
    this.session = newSessionId();
    this.sessionFrom = description;
    this.sessionHasBytes = false;
    // Until the first byte, the link counts as idle since the connection.
    this.lastRecvNs = nowNs();
    if (this.pauseMarkNs > 0n) this.lastStalledNs = loopStalls().stalledNs(this.lastRecvNs);
  }

  /** Where the open session's connection came from (logged when its first byte comes). */
  private sessionFrom = '';
  /** Whether the open session has had a byte: only then does it publish chunks and an end. */
  private sessionHasBytes = false;

  data(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (!this.session) this.connected('data without a connection event');
    if (!this.sessionHasBytes) {
      this.sessionHasBytes = true;
      this.sessions.push(this.session!);
      this.stats.sessions++;
      this.options.log?.info({ session: this.session, from: this.sessionFrom }, 'link session started');
    }
    this.stats.bytesIn += bytes.length;
    const now = nowNs();
    const pauseMark = this.pauseMarkNs;
    if (pauseMark > 0n) {
      let idle = now - this.lastRecvNs;
      // Not the time this process could not run: its reads were late then, not the line idle.
      const stalled = loopStalls().stalledNs(now);
      idle -= stalled - this.lastStalledNs;
      if (idle < 0n) idle = 0n;
      this.lastStalledNs = stalled;
      // An idle time shorter than the mark is no pause, at a chunk's start as anywhere else.
      if (this.pieceBytes === 0) this.segments = [{ offset: 0, pauseNs: idle >= pauseMark ? idle : 0n, recvNs: now }];
      else if (idle >= pauseMark) {
        // The stretch before the pause ended with the last read.
        this.segments[this.segments.length - 1].recvNs = this.lastRecvNs;
        this.segments.push({ offset: this.pieceBytes, pauseNs: idle, recvNs: now });
      }
    }
    this.lastRecvNs = now;
    this.pieces.push(bytes);
    this.pieceBytes += bytes.length;
    if (this.pieceBytes >= this.chunkBytes || (this.flushPassed && this.pieceBytes >= this.minChunkBytes)) this.seal();
    else if (!this.flushTimer) this.flushTimer = setTimeout(this.flushDue, this.flushMs);
  }

  /** The chunk being gathered is older than `flushMs`: it is sealed as soon as it holds `minChunkBytes`. */
  private flushPassed = false;

  /** At `flushMs`: sealed when it holds enough, otherwise when it does or at `maxFlushMs`. */
  private readonly flushDue = () => {
    this.flushTimer = undefined;
    if (this.pieceBytes >= this.minChunkBytes || this.maxFlushMs === this.flushMs) this.seal();
    else {
      this.flushPassed = true;
      this.flushTimer = setTimeout(() => this.seal(), this.maxFlushMs - this.flushMs);
    }
  };

  disconnected(reason: string): void {
    this.connection = undefined;
    this.endSession(reason);
  }

  private endSession(reason: string): void {
    if (!this.session) return;
    if (this.sessionHasBytes) {
      this.seal();
      this.enqueue({ session: this.session, data: new Uint8Array(0), recvNs: nowNs(), lost: 0, eos: true });
      this.options.log?.info({ session: this.session, reason }, 'link session ended');
    }
    this.session = undefined;
    this.sessionHasBytes = false;
  }

  /**
   * Ends the open session and starts the next one on the same connection (new link settings
   * apply from a session's start). Returns the new session, or `undefined` when none is open.
   */
  startNewSession(reason: string): string | undefined {
    if (!this.session) return undefined;
    // The target stays connected: only the session changes.
    this.beginSession(`same connection (${reason})`, reason);
    return this.session;
  }

  /**
   * Puts a marker after every byte read so far: the bytes waiting are sealed into a chunk and
   * the marker follows on an empty chunk of its own, so the decoder places it exactly there.
   * Returns the session, or `undefined` when none has begun (no byte read since the connect).
   */
  mark(marker: LinkMarker): string | undefined {
    if (!this.session || !this.sessionHasBytes) return undefined;
    this.seal();
    this.enqueue({ session: this.session, data: new Uint8Array(0), recvNs: nowNs(), lost: 0, eos: false, marker });
    return this.session;
  }

  connectionEvent(event: ConnectionEvent, peer: string, why: string): void {
    this.stats.connections[event]++;
    const what = {
      refused: 'connection refused',
      replaced: 'connection replaced',
      'idle-closed': 'idle connection closed',
    };
    this.options.log?.warn({ peer, event, why, session: this.session }, what[event]);
  }

  waitForRoom(): Promise<void> {
    if (this.queuedBytes + this.pieceBytes < this.bufferBytes / 2) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when everything read so far has been acknowledged by JetStream. */
  idle(): Promise<void> {
    this.seal();
    if (this.queue.length === 0 && !this.inFlight) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Ends the open session, publishes what is queued (until `deadlineMs`), and stops. */
  async close(deadlineMs = 4000): Promise<void> {
    this.disconnected('gateway stopping');
    const timeout = new Promise<void>((r) => setTimeout(r, deadlineMs).unref());
    await Promise.race([this.idle(), timeout]);
    this.running = false;
    this.wake?.();
    await this.loop;
    if (this.queue.length > 0) {
      // No later chunk can carry them in th-lost: counted as dropped, and said.
      this.stats.bytesDropped += this.queuedBytes;
      this.options.log?.warn(
        { chunks: this.queue.length, bytes: this.queuedBytes },
        'stopped with chunks not published; their bytes are lost',
      );
    }
  }

  private inFlight = false;

  private seal(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    this.flushPassed = false;
    if (this.pieceBytes === 0 || !this.session) return;
    const data = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces, this.pieceBytes);
    this.pieces = [];
    this.pieceBytes = 0;
    const chunk: QueuedChunk = { session: this.session, data, recvNs: this.lastRecvNs, lost: 0, eos: false };
    if (this.pauseMarkNs > 0n) {
      chunk.pauseNs = this.segments[0].pauseNs;
      if (this.segments.length > 1) {
        this.segments[this.segments.length - 1].recvNs = this.lastRecvNs;
        chunk.segments = this.segments;
      }
      this.segments = [];
    } else if (this.options.noPauses) chunk.pauseNs = 0n;
    this.enqueue(chunk);
  }

  private enqueue(chunk: QueuedChunk): void {
    const carried = this.carriedLost.get(chunk.session);
    if (carried !== undefined) {
      chunk.lost += carried;
      this.carriedLost.delete(chunk.session);
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.data.length;
    this.dropOldestWhileFull();
    this.stats.queuedBytes = this.queuedBytes;
    if (this.loop) this.wake?.();
    else if (this.running) this.loop = this.publishLoop();
  }

  private dropOldestWhileFull(): void {
    while (this.queuedBytes > this.bufferBytes) {
      // A chunk that was tried keeps its place: its index is fixed, and JetStream may have
      // stored it even though the ack never came.
      const index = this.queue.findIndex((c) => c.chunk === undefined && !c.eos && c.data.length > 0);
      if (index < 0) return;
      const [dropped] = this.queue.splice(index, 1);
      this.queuedBytes -= dropped.data.length;
      this.stats.bytesDropped += dropped.data.length;
      // The loss is reported on the next chunk of the same session (its end chunk at worst),
      // or on the session's next chunk to come.
      const lost = dropped.lost + dropped.data.length;
      const next = this.queue.find((c, i) => i >= index && c.session === dropped.session);
      if (next) next.lost += lost;
      else this.carriedLost.set(dropped.session, (this.carriedLost.get(dropped.session) ?? 0) + lost);
    }
  }

  private async publishLoop(): Promise<void> {
    const retry = new Backoff({ fromMs: 100, maxMs: 2000 });
    for (;;) {
      const chunk = this.queue[0];
      if (!chunk) {
        for (const w of this.idleWaiters.splice(0)) w();
        if (!this.running) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      // The index is fixed the first time the chunk is tried, so every retry has the same id.
      chunk.chunk ??= this.takeChunkIndex(chunk.session);
      this.inFlight = true;
      const started = performance.now();
      try {
        if (!this.consumersReady || chunk.chunk === 0) {
          await ensureLinkConsumers(this.options.bus, this.options.link);
          this.consumersReady = true;
        }
        await publishRawChunk(this.options.bus, this.options.link, {
          session: chunk.session,
          chunk: chunk.chunk,
          recvNs: chunk.recvNs,
          lost: chunk.lost,
          eos: chunk.eos,
          data: chunk.data,
          pauseNs: chunk.pauseNs,
          segments: chunk.segments,
          settings: this.options.settings,
          capture: this.options.captures,
          marker: chunk.marker,
        });
      } catch (err) {
        const full = isStreamFullError(err);
        if (full) this.stats.publishRefused++;
        else {
          this.stats.publishFailures++;
          // NATS may have come back without what it had (consumers included).
          this.consumersReady = false;
        }
        if (!this.outage)
          this.options.log?.warn(
            { err, queuedBytes: this.queuedBytes },
            full
              ? 'raw stream full (decoders or storage behind); buffering the link'
              : 'NATS unavailable; buffering the link',
          );
        this.outage = true;
        this.stats.holding = true;
        if (!this.running) return;
        await new Promise((r) => setTimeout(r, retry.next()));
        continue;
      } finally {
        this.inFlight = false;
      }
      if (this.outage)
        this.options.log?.info(
          { queuedBytes: this.queuedBytes, droppedBytes: this.stats.bytesDropped },
          'raw stream accepting again; publishing the buffer',
        );
      this.outage = false;
      this.stats.holding = false;
      retry.reset();
      // The chunk may have been dropped-around while in flight; it is still the head.
      this.queue.shift();
      this.queuedBytes -= chunk.data.length;
      this.stats.queuedBytes = this.queuedBytes;
      this.stats.bytesPublished += chunk.data.length;
      this.stats.chunksPublished++;
      // A session's first chunk is there: decoders claim the link now instead of at their next look.
      if (chunk.chunk === 0) announceLinkStarted(this.options.bus, this.options.link);
      if (chunk.eos) this.nextChunk.delete(chunk.session);
      this.options.onPublished?.({
        session: chunk.session,
        chunk: chunk.chunk,
        bytes: chunk.data.length,
        lost: chunk.lost,
        eos: chunk.eos,
        ms: performance.now() - started,
      });
      if (this.queuedBytes + this.pieceBytes < this.bufferBytes / 2) for (const w of this.roomWaiters.splice(0)) w();
    }
  }

  private takeChunkIndex(session: string): number {
    const n = this.nextChunk.get(session) ?? 0;
    this.nextChunk.set(session, n + 1);
    return n;
  }
}
