import type { Log } from '@tracehub/contracts';
import { Outlet, type OutletClientStatus, OutletPort, type RecordFeed } from '@tracehub/live';
import type { ReporterOptions } from './endpoint-schema.js';
import type { LinkPalmIdsOf } from './link-palm-ids.js';
import { encodeBatch, type PalmChunk } from './palm-socket-sink.js';
import { RecordMessageEncoder } from './record-messages.js';

export type ListenerClientStatus = OutletClientStatus;

export interface ListenerStatus {
  host: string;
  port: number;
  clients: ListenerClientStatus[];
}

/** What the listening port holds now (metrics, and the api's memory return). */
export interface ListenerLoad {
  clients: number;
  heldRecords: number;
  departed: number;
}

/**
 * The listening mode: a TCP port that Reporters and scripts connect to, each getting the same
 * one-way PalmTrace stream of live records. Every batch is encoded once into one shared
 * bounded {@link Outlet}; each client reads it at its own pace, so a client that stops reading
 * costs nothing per record, drops only its own view of the oldest records (and is told how
 * many), and never holds up the others, the NATS connection or HTTP requests.
 */
export class PalmTraceListener {
  private readonly encoder: RecordMessageEncoder;
  private readonly outlet: Outlet<PalmChunk>;
  private readonly port: OutletPort;
  private removeFromFeed: (() => void) | null = null;

  constructor(
    private readonly feed: RecordFeed,
    options: ReporterOptions,
    queue: { records: number; bytes: number },
    private readonly log: Log,
    linkIds?: LinkPalmIdsOf,
  ) {
    this.encoder = new RecordMessageEncoder(options, linkIds);
    this.outlet = new Outlet(queue);
    this.port = new OutletPort(
      this.outlet,
      (n, reason) =>
        this.encoder.droppedNotice(
          n,
          reason === 'unreceived'
            ? 'they did not reach tracehub live; they are stored'
            : 'this client was slower than the stream',
        ),
      'PalmTrace',
      log,
    );
  }

  async listen(port: number, host: string): Promise<number> {
    const bound = await this.port.listen(port, host);
    // Runs in the NATS callback: encode once for every client, push; never waits.
    this.removeFromFeed = this.feed.add(
      (batch) => {
        if (this.port.clientCount === 0) return;
        const encoded = encodeBatch(this.encoder, batch);
        if (encoded) this.outlet.push(encoded.chunk, encoded.records, encoded.chunk.bytes.length);
      },
      (gap) => {
        if (this.port.clientCount > 0 && this.encoder.admitsLink(gap)) this.outlet.pushUnreceived(gap.records);
      },
    );
    this.log.info({ host, port: bound }, 'PalmTrace listener ready');
    return bound;
  }

  async close(): Promise<void> {
    this.removeFromFeed?.();
    this.removeFromFeed = null;
    await this.port.close();
  }

  /**
   * Clients connected, the records the shared outlet holds for them (0 once every client has
   * gone), and the clients that have left, in all.
   */
  load(): ListenerLoad {
    return { clients: this.port.clientCount, heldRecords: this.outlet.heldRecordCount, departed: this.port.departed };
  }

  status(): ListenerStatus {
    return this.port.status();
  }
}
