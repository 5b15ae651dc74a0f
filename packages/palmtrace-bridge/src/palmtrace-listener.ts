import { createServer, type Server, type Socket } from 'node:net';
import type { RecordBatch } from '@tracehub/contracts';
import type { ReporterOptions } from './endpoint-schema.js';
import type { LiveRecordFeed } from './live-record-feed.js';
import { MessageOutlet } from './message-outlet.js';
import { RecordMessageEncoder } from './record-messages.js';
import type { BridgeLog } from './reporter-endpoint.js';

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

interface ListenerClient {
  socket: Socket;
  outlet: MessageOutlet;
  connectedAt: Date;
}

/**
 * The listening mode: a TCP port that Reporters and scripts connect to, each getting the same
 * one-way PalmTrace stream of live records. Every record is encoded once and queued for each
 * client in its own bounded outlet, so a slow client drops its own oldest records and never
 * holds up the others.
 */
export class PalmTraceListener {
  private server: Server | null = null;
  private readonly clients = new Set<ListenerClient>();
  private readonly encoder: RecordMessageEncoder;
  private removeFromFeed: (() => void) | null = null;
  private boundPort = 0;

  constructor(
    private readonly feed: LiveRecordFeed,
    options: ReporterOptions,
    private readonly queue: { records: number; bytes: number },
    private readonly log: BridgeLog,
  ) {
    this.encoder = new RecordMessageEncoder(options);
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
    this.removeFromFeed = this.feed.add((batch) => this.offerBatch(batch));
    this.log.info({ host, port: this.boundPort }, 'PalmTrace listener ready');
    return this.boundPort;
  }

  async close(): Promise<void> {
    this.removeFromFeed?.();
    this.removeFromFeed = null;
    const server = this.server;
    this.server = null;
    for (const client of this.clients) client.socket.destroy();
    this.clients.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
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
        messagesSent: c.outlet.messagesSent,
        bytesSent: c.outlet.bytesSent,
        dropped: c.outlet.dropped,
        queued: c.outlet.queued,
      })),
    };
  }

  private accept(socket: Socket): void {
    const outlet = new MessageOutlet(this.queue.records, this.queue.bytes, (n) =>
      this.encoder.droppedNotice(n, 'this client was slower than the stream'),
    );
    const client: ListenerClient = { socket, outlet, connectedAt: new Date() };
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
      outlet.detach();
      outlet.clear();
      this.clients.delete(client);
    });
    outlet.attach(socket);
  }

  /** Runs in the NATS callback: encode each matching record once, queue it for every client. */
  private offerBatch(batch: RecordBatch): void {
    if (this.clients.size === 0 || !this.encoder.admitsLink(batch)) return;
    for (const record of batch.records) {
      if (!this.encoder.matches(record)) continue;
      const messages = this.encoder.encode(record);
      if (!messages) continue;
      for (const client of this.clients) client.outlet.offer(messages);
    }
  }
}
