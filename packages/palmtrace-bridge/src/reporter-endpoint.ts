import { connect, type Socket } from 'node:net';
import type { Log } from '@tracehub/contracts';
import type { Database } from '@tracehub/db';
import { type MissedReason, Outlet, type OutletReader, type RecordFeed } from '@tracehub/live';
import type { Kysely } from 'kysely';
import type { ReplayRequest, ReporterEndpointInput } from './endpoint-schema.js';
import type { LinkPalmIdsOf } from './link-palm-ids.js';
import { chunkOf, encodeBatch, type PalmChunk, type SendCounters, socketSink } from './palm-socket-sink.js';
import { RecordMessageEncoder } from './record-messages.js';
import { OriginalPace, storedRecords } from './stored-records.js';

export interface ReporterEndpointDeps {
  db: Kysely<Database>;
  feed: RecordFeed;
  log: Log;
  /** Wait between connection attempts while the Reporter is away (PalmTrace: 1000 ms). */
  retryMs: number;
  /** The PalmTrace ids the links' settings give. */
  linkIds?: LinkPalmIdsOf;
  /** Default queue bound when the endpoint does not set one. */
  queueRecords: number;
  queueBytes: number;
}

/**
 * What an endpoint had done when another API process served it (that process died or
 * stopped): its counters go on from there, and a replay resumes after the records it had
 * queued (a `done` replay is not sent again).
 */
export interface CarriedStatus {
  messagesSent: number;
  bytesSent: number;
  dropped: number;
  reconnects: number;
  bytesIgnored: number;
  replay: { state: ReplayState; records: number } | null;
}

export type ReplayState = 'waiting' | 'running' | 'done' | 'failed';

export interface ReporterStatus {
  id: string;
  source: 'config' | 'api';
  host: string;
  port: number;
  mode: 'live' | 'replay';
  connected: boolean;
  messagesSent: number;
  bytesSent: number;
  dropped: number;
  reconnects: number;
  queued: number;
  /** Bytes the Reporter sent back (the protocol has no reverse channel: logged and ignored). */
  bytesIgnored: number;
  lastError: string | null;
  replay: { state: ReplayState; records: number; error: string | null } | null;
  config: ReporterEndpointInput;
}

/** What a Reporter is told about records it did not get. */
const WHY_MISSED: Record<MissedReason, string> = {
  slow: 'the Reporter was slower than the stream',
  away: 'the Reporter was not connected',
  unreceived: 'they did not reach tracehub live; they are stored',
};

/**
 * One Reporter endpoint in the PalmTrace role: connects out to the listening Reporter,
 * retries about every second while it is away, and never waits to read (whatever the
 * Reporter sends is counted, logged once per connection and ignored). Records come from the
 * live stream through the endpoint's filter, or from a stored replay, into a bounded
 * {@link Outlet}. While disconnected, live records keep queuing (and the oldest drop),
 * so a Reporter that restarts quickly loses nothing but what the queue could not hold.
 */
export class ReporterEndpoint {
  private readonly outlet: Outlet<PalmChunk>;
  private readonly reader: OutletReader<PalmChunk>;
  private readonly counters: SendCounters = { messagesSent: 0, bytesSent: 0 };
  private readonly encoder: RecordMessageEncoder;
  private socket: Socket | null = null;
  private connected = false;
  private everConnected = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private removeFromFeed: (() => void) | null = null;
  private reconnects = 0;
  private bytesIgnored = 0;
  private lastError: string | null = null;
  private replayState: { state: ReplayState; records: number; error: string | null } | null = null;
  private readonly stopSignal = { stopped: false };
  /** Missed records counted before this process served the endpoint. */
  private readonly droppedBefore: number;

  constructor(
    readonly id: string,
    readonly source: 'config' | 'api',
    readonly config: ReporterEndpointInput,
    private readonly deps: ReporterEndpointDeps,
    private readonly carried?: CarriedStatus,
  ) {
    this.encoder = new RecordMessageEncoder(config, deps.linkIds);
    this.outlet = new Outlet({ records: config.queueRecords ?? deps.queueRecords, bytes: deps.queueBytes });
    this.reader = this.outlet.reader();
    this.droppedBefore = carried?.dropped ?? 0;
    if (carried) {
      this.counters.messagesSent = carried.messagesSent;
      this.counters.bytesSent = carried.bytesSent;
      this.reconnects = carried.reconnects;
      this.bytesIgnored = carried.bytesIgnored;
      // Its Reporter was connected to the process before: this connection is a reconnect.
      this.everConnected = true;
      // Records published while no process served it are not known here: say so, once.
      const notice = this.encoder.notice(
        'this stream moved to another tracehub API process; records published while it moved are missing',
      );
      this.outlet.push({ bytes: notice, messages: 1 }, 0, notice.length);
    }
  }

  start(): void {
    if (this.config.replay) {
      const before = this.carried?.replay;
      if (before?.state === 'done') {
        this.replayState = { state: 'done', records: before.records, error: null };
      } else {
        this.replayState = { state: 'waiting', records: 0, error: null };
        void this.replay(this.config.replay, before?.records ?? 0);
      }
    } else {
      // Runs in the NATS callback: filter, encode, push; never waits.
      this.removeFromFeed = this.deps.feed.add(
        (batch) => {
          const encoded = encodeBatch(this.encoder, batch);
          if (encoded) this.outlet.push(encoded.chunk, encoded.records, encoded.chunk.bytes.length);
        },
        (gap) => {
          if (this.encoder.admitsLink(gap)) this.outlet.pushUnreceived(gap.records);
        },
      );
    }
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSignal.stopped = true;
    this.removeFromFeed?.();
    this.removeFromFeed = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.reader.close();
    this.outlet.clear();
    const socket = this.socket;
    if (socket && !socket.destroyed) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.destroy();
      });
    }
  }

  status(): ReporterStatus {
    return {
      id: this.id,
      source: this.source,
      host: this.config.host,
      port: this.config.port,
      mode: this.config.replay ? 'replay' : 'live',
      connected: this.connected,
      messagesSent: this.counters.messagesSent,
      bytesSent: this.counters.bytesSent,
      dropped: this.droppedBefore + this.reader.missed,
      reconnects: this.reconnects,
      queued: this.reader.queued,
      bytesIgnored: this.bytesIgnored,
      lastError: this.lastError,
      replay: this.replayState ? { ...this.replayState } : null,
      config: this.config,
    };
  }

  get isConnected(): boolean {
    return this.connected;
  }

  private connect(): void {
    if (this.stopped) return;
    const socket = connect({ host: this.config.host, port: this.config.port });
    this.socket = socket;
    let ignoredHere = 0;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    socket.on('connect', () => {
      if (this.stopped) return socket.destroy();
      if (this.everConnected) this.reconnects++;
      this.everConnected = true;
      this.connected = true;
      this.lastError = null;
      this.deps.log.info({ reporter: this.id, host: this.config.host, port: this.config.port }, 'Reporter connected');
      this.reader.attach(
        socketSink(socket, this.counters, (n, reason) => this.encoder.droppedNotice(n, WHY_MISSED[reason])),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      // The protocol is one way (spec §6 rule 8): count it, say so once, ignore it.
      if (ignoredHere === 0) {
        this.deps.log.warn(
          { reporter: this.id, bytes: chunk.length },
          'the Reporter sent bytes; PalmTrace has no reverse channel, ignoring them',
        );
      }
      ignoredHere += chunk.length;
      this.bytesIgnored += chunk.length;
    });
    socket.on('error', (error) => {
      this.lastError = error.message;
    });
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
      if (this.connected) {
        this.deps.log.warn({ reporter: this.id, error: this.lastError }, 'Reporter connection closed; retrying');
      }
      this.connected = false;
      this.reader.detach();
      if (!this.stopped) this.retryTimer = setTimeout(() => this.connect(), this.deps.retryMs);
    });
  }

  /**
   * Sends stored records through the queue, waiting for room instead of dropping; the first
   * `skip` records (queued by the process that served the endpoint before) are not sent again.
   */
  private async replay(request: ReplayRequest, skip: number): Promise<void> {
    const state = this.replayState as NonNullable<typeof this.replayState>;
    const pace = request.pace === 'original' ? new OriginalPace() : null;
    try {
      // Start when the Reporter is there, so the original pace means something to it.
      while (!this.connected && !this.stopped) await new Promise((resolve) => setTimeout(resolve, 50));
      state.state = 'running';
      for await (const record of storedRecords(this.deps.db, request, this.config.filter)) {
        if (this.stopped) return;
        if (!this.encoder.matches(record)) continue;
        const messages = this.encoder.encode(record);
        if (!messages) continue;
        if (state.records < skip) {
          state.records++;
          continue;
        }
        if (pace) await pace.wait(record, this.stopSignal);
        await this.outlet.whenRoom();
        if (this.stopped) return;
        const chunk = chunkOf(messages);
        this.outlet.push(chunk, 1, chunk.bytes.length);
        state.records++;
      }
      state.state = 'done';
      this.deps.log.info({ reporter: this.id, records: state.records }, 'replay done');
    } catch (error) {
      state.state = 'failed';
      state.error = error instanceof Error ? error.message : String(error);
      this.deps.log.warn({ reporter: this.id, error: state.error }, 'replay failed');
    }
  }
}
