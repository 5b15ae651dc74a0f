import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { type Log, silentLog } from '@tracehub/contracts';
import type { MissedReason, Outlet, OutletReader } from './outlet.js';
import { type ByteChunk, type SendCounters, socketSink } from './socket-sink.js';

export interface OutletClientStatus {
  remoteAddress: string;
  remotePort: number;
  connectedAt: string;
  messagesSent: number;
  bytesSent: number;
  /** Records this client missed (and was told of). */
  dropped: number;
  queued: number;
}

interface OutletClient {
  socket: Socket;
  reader: OutletReader<ByteChunk>;
  counters: SendCounters;
  connectedAt: Date;
}

/**
 * A listening TCP port whose clients each read one shared outlet at their own pace: a
 * one-way stream (bytes a client sends are ignored, said once in the log), a missed count
 * turned into the stream's own notice message. What the PalmTrace listening mode and the trace
 * box output have in common.
 */
export class OutletPort {
  private server: Server | null = null;
  private readonly clients = new Set<OutletClient>();
  private boundPort = 0;
  /** Clients that have left, in all (read only outside). */
  departed = 0;

  constructor(
    private readonly outlet: Outlet<ByteChunk>,
    private readonly notice: (records: number, reason: MissedReason) => Uint8Array,
    /** Who the clients are, for the log: `PalmTrace`, `trace box`. */
    private readonly what: string,
    private readonly log: Log = silentLog,
  ) {}

  async listen(port: number, host: string): Promise<number> {
    const server = createServer((socket) => this.accept(socket));
    // `once` rejects on 'error' (a port in use) before 'listening'.
    await once(server.listen({ port, host }), 'listening');
    this.server = server;
    const address = server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : port;
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Closes every client and the port; the outlet is cleared. */
  async close(): Promise<void> {
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

  status(): { host: string; port: number; clients: OutletClientStatus[] } {
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
    const reader = this.outlet.reader(socketSink(socket, counters, this.notice));
    const client: OutletClient = { socket, reader, counters, connectedAt: new Date() };
    this.clients.add(client);
    socket.setNoDelay(true);
    let warned = false;
    socket.on('data', () => {
      if (warned) return;
      warned = true;
      this.log.warn(
        { remote: socket.remoteAddress },
        `a ${this.what} client sent bytes; the stream is one way, ignoring them`,
      );
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      reader.close();
      if (this.clients.delete(client)) this.departed++;
      if (this.clients.size === 0) this.outlet.clear();
    });
    this.log.info({ remote: `${socket.remoteAddress}:${socket.remotePort}` }, `${this.what} client connected`);
  }
}
