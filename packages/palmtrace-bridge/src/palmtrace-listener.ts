import { createServer, type Server, type Socket } from 'node:net';
import type { Log } from '@tracehub/contracts';
import { Outlet, type OutletReader, type RecordFeed } from '@tracehub/live';
import type { ReporterOptions } from './endpoint-schema.js';
import type { LinkPalmIdsOf } from './link-palm-ids.js';
import { encodeBatch, type PalmChunk, type SendCounters, socketSink } from './palm-socket-sink.js';
import { RecordMessageEncoder } from './record-messages.js';

export interface ListenerClientStatus {
  remoteAddress: string;
  remotePort: number;
  connectedAt: string;
  messagesSent: number;
  bytesSent: number;
  dropped: number;
  queued: number;
}

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

interface ListenerClient {
  socket: Socket;
  reader: OutletReader<PalmChunk>;
  counters: SendCounters;
  connectedAt: Date;
}

/**
 * The listening mode: a TCP port that Reporters and scripts connect to, each getting the same
 * one-way PalmTrace stream of live records. Every batch is encoded once into one shared
 * bounded {@link Outlet}; each client reads it at its own pace, so a client that stops reading
 * costs nothing per record, drops only its own view of the oldest records (and is told how
 * many), and never holds up the others, the NATS connection or HTTP requests.
 */
export class PalmTraceListener {
  private server: Server | null = null;
  private readonly clients = new Set<ListenerClient>();
  private readonly encoder: RecordMessageEncoder;
  private readonly outlet: Outlet<PalmChunk>;
  private removeFromFeed: (() => void) | null = null;
  private boundPort = 0;
  private departed = 0;

  constructor(
    private readonly feed: RecordFeed,
    options: ReporterOptions,
    queue: { records: number; bytes: number },
    private readonly log: Log,
    linkIds?: LinkPalmIdsOf,
  ) {
    this.encoder = new RecordMessageEncoder(options, linkIds);
    this.outlet = new Outlet(queue);
  }

  async listen(port: number, host: string): Promise<number> {
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : port;
    // Runs in the NATS callback: encode once for every client, push; never waits.
    this.removeFromFeed = this.feed.add(
      (batch) => {
        if (this.clients.size === 0) return;
        const encoded = encodeBatch(this.encoder, batch);
        if (encoded) this.outlet.push(encoded.chunk, encoded.records, encoded.chunk.bytes.length);
      },
      (gap) => {
        if (this.clients.size > 0 && this.encoder.admitsLink(gap)) this.outlet.pushUnreceived(gap.records);
      },
    );
    this.log.info({ host, port: this.boundPort }, 'PalmTrace listener ready');
    return this.boundPort;
  }

  async close(): Promise<void> {
    this.removeFromFeed?.();
    this.removeFromFeed = null;
    const server = this.server;
    this.server = null;
    for (const client of this.clients) {
      client.reader.close();
      client.socket.destroy();
    }
    this.clients.clear();
    this.outlet.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Clients connected, the records the shared outlet holds for them (0 once every client has
   * gone), and the clients that have left, in all.
   */
  load(): ListenerLoad {
    return { clients: this.clients.size, heldRecords: this.outlet.heldRecordCount, departed: this.departed };
  }

  status(): ListenerStatus {
    const address = this.server?.address();
    return {
      host: typeof address === 'object' && address ? address.address : '',
      port: this.boundPort,
      clients: [...this.clients].map((c) => ({
        remoteAddress: c.socket.remoteAddress ?? '',
        remotePort: c.socket.remotePort ?? 0,
        connectedAt: c.connectedAt.toISOString(),
        messagesSent: c.counters.messagesSent,
        bytesSent: c.counters.bytesSent,
        dropped: c.reader.missed,
        queued: c.reader.queued,
      })),
    };
  }

  private accept(socket: Socket): void {
    const counters: SendCounters = { messagesSent: 0, bytesSent: 0 };
    const reader = this.outlet.reader(
      socketSink(socket, counters, (n, reason) =>
        this.encoder.droppedNotice(
          n,
          reason === 'unreceived'
            ? 'they did not reach tracehub live; they are stored'
            : 'this client was slower than the stream',
        ),
      ),
    );
    const client: ListenerClient = { socket, reader, counters, connectedAt: new Date() };
    this.clients.add(client);
    socket.setNoDelay(true);
    let warned = false;
    socket.on('data', () => {
      if (warned) return;
      warned = true;
      this.log.warn(
        { remote: socket.remoteAddress },
        'a PalmTrace client sent bytes; the stream is one way, ignoring them',
      );
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      reader.close();
      if (this.clients.delete(client)) this.departed++;
      if (this.clients.size === 0) this.outlet.clear();
    });
  }
}
