import { createServer, type Server, type Socket } from 'node:net';
import type { PalmTraceMessage } from './message.js';
import { type PalmTraceEvent, PalmTraceParser } from './parser.js';
import type { PalmTraceProblem } from './problem.js';
import type { PalmTextEncoding } from './text-encoding.js';

export interface PalmReporterStandInOptions {
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Passed to each connection's parser. */
  maxMessageLength?: number;
  textEncoding?: PalmTextEncoding;
  /** Called for each event as it happens, after it is recorded (for logging and live tools). */
  onEvent?: (event: StandInEvent) => void;
}

/** What the stand-in saw, in arrival order. */
export type StandInEvent =
  | { type: 'connected'; connection: ReporterConnection }
  | { type: 'closed'; connection: ReporterConnection }
  | { type: 'message'; connection: ReporterConnection; message: PalmTraceMessage }
  | { type: 'problem'; connection: ReporterConnection; problem: PalmTraceProblem };

/** A message or problem, with the connection it came on. */
export interface ReceivedMessage {
  connection: number;
  receivedAt: number;
  message: PalmTraceMessage;
}
export interface ReceivedProblem {
  connection: number;
  receivedAt: number;
  problem: PalmTraceProblem;
}

/** One accepted TCP connection, i.e. one PalmTrace session. */
export interface ReporterConnection {
  /** 1, 2, 3… in order of acceptance, across restarts. */
  id: number;
  remoteAddress: string;
  remotePort: number;
  openedAt: number;
  /** Null while open. */
  closedAt: number | null;
  bytes: number;
  messages: PalmTraceMessage[];
  problems: PalmTraceProblem[];
  /** The stand-in closed it because framing was lost (bad version or length). */
  closedForProblem: boolean;
}

interface Waiter {
  ready: () => boolean;
  resolve: () => void;
}

/**
 * A strict Palm Reporter: the TCP server end of PalmTrace. Decodes every connection with a
 * {@link PalmTraceParser}, records every message and problem, never writes a byte, and closes a
 * connection whose framing is lost, as the spec's §6 asks of a receiver. It can be closed and
 * listened again on the same port (a Reporter going away and coming back), and can stop
 * reading (a Reporter too slow to keep up). Records survive restarts until `clear()`.
 */
export class PalmReporterStandIn {
  readonly messages: ReceivedMessage[] = [];
  readonly problems: ReceivedProblem[] = [];
  readonly connections: ReporterConnection[] = [];
  private readonly options: PalmReporterStandInOptions;
  private server: Server | null = null;
  private readonly sockets = new Map<Socket, ReporterConnection>();
  private waiters: Waiter[] = [];
  private boundPort = 0;
  private readingPaused = false;
  private lastConnectionId = 0;

  constructor(options: PalmReporterStandInOptions = {}) {
    this.options = options;
  }

  /** The port listened on (the last one, once closed); 0 before the first `listen`. */
  get port(): number {
    return this.boundPort;
  }

  get listening(): boolean {
    return this.server !== null;
  }

  /** Connections open now. */
  get openConnections(): number {
    return this.sockets.size;
  }

  /**
   * Starts accepting connections. Without a port: the port of the previous `listen` (so
   * close + listen is a restart on the same port), else one the system picks. Returns the port.
   */
  async listen(port: number = this.boundPort): Promise<number> {
    if (this.server) throw new Error(`PalmReporterStandIn is already listening on port ${this.boundPort}`);
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: this.options.host ?? '127.0.0.1' }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : port;
    return this.boundPort;
  }

  /** Stops listening and drops every open connection (a Reporter that quits). Records are kept. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const socket of this.sockets.keys()) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stops reading every connection, present and future: the sender's TCP window fills up. */
  pauseReading(): void {
    this.readingPaused = true;
    for (const socket of this.sockets.keys()) socket.pause();
  }

  resumeReading(): void {
    this.readingPaused = false;
    for (const socket of this.sockets.keys()) socket.resume();
  }

  /** Forgets every recorded message, problem and closed connection. */
  clear(): void {
    this.messages.length = 0;
    this.problems.length = 0;
    const open = new Set(this.sockets.values());
    const kept = this.connections.filter((connection) => open.has(connection));
    this.connections.length = 0;
    this.connections.push(...kept);
    for (const connection of kept) {
      connection.messages.length = 0;
      connection.problems.length = 0;
    }
  }

  /** Resolves with the first `count` messages once that many arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5000): Promise<PalmTraceMessage[]> {
    await this.waitUntil(
      () => this.messages.length >= count,
      timeoutMs,
      () => `waited ${timeoutMs} ms for ${count} PalmTrace messages, got ${this.messages.length}`,
    );
    return this.messages.slice(0, count).map((received) => received.message);
  }

  /** Resolves once `count` connections are recorded (open or closed); rejects after `timeoutMs`. */
  async waitForConnections(count: number, timeoutMs = 5000): Promise<ReporterConnection[]> {
    await this.waitUntil(
      () => this.connections.length >= count,
      timeoutMs,
      () => `waited ${timeoutMs} ms for ${count} PalmTrace connections, got ${this.connections.length}`,
    );
    return this.connections.slice(0, count);
  }

  private waitUntil(ready: () => boolean, timeoutMs: number, failure: () => string): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(failure()));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.ready()) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  private accept(socket: Socket): void {
    const connection: ReporterConnection = {
      id: ++this.lastConnectionId,
      remoteAddress: socket.remoteAddress ?? '',
      remotePort: socket.remotePort ?? 0,
      openedAt: Date.now(),
      closedAt: null,
      bytes: 0,
      messages: [],
      problems: [],
      closedForProblem: false,
    };
    this.connections.push(connection);
    this.sockets.set(socket, connection);
    this.options.onEvent?.({ type: 'connected', connection });
    if (this.readingPaused) socket.pause();
    const parser = new PalmTraceParser({
      maxMessageLength: this.options.maxMessageLength,
      textEncoding: this.options.textEncoding,
    });
    const record = (event: PalmTraceEvent) => {
      const receivedAt = Date.now();
      if (event.type === 'message') {
        connection.messages.push(event.message);
        this.messages.push({ connection: connection.id, receivedAt, message: event.message });
        this.options.onEvent?.({ type: 'message', connection, message: event.message });
      } else {
        connection.problems.push(event.problem);
        this.problems.push({ connection: connection.id, receivedAt, problem: event.problem });
        this.options.onEvent?.({ type: 'problem', connection, problem: event.problem });
      }
    };
    socket.on('data', (chunk: Buffer) => {
      connection.bytes += chunk.length;
      parser.push(chunk, record);
      if (parser.ended && !connection.closedForProblem) {
        connection.closedForProblem = true;
        socket.destroy();
      }
      this.wakeWaiters();
    });
    socket.on('end', () => {
      parser.end(record);
      socket.end();
    });
    // Resets from the peer are normal for a sender that dies; the close handler records it.
    socket.on('error', () => {});
    socket.on('close', () => {
      connection.closedAt = Date.now();
      this.sockets.delete(socket);
      this.options.onEvent?.({ type: 'closed', connection });
      this.wakeWaiters();
    });
    this.wakeWaiters();
  }
}
