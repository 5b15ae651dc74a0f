import { createSocket, type Socket } from 'node:dgram';
import type { FrontEndPeer, FrontEndStatus, QspyFrontEnd } from './front-end.js';

/** qspy's default front-end port. */
export const QSPY_FRONTEND_PORT = 7701;

export interface FrontEndPortOptions {
  host: string;
  port: number;
  frontEnd: QspyFrontEnd;
  /**
   * Datagrams handed to the socket and not yet sent, beyond which new ones are dropped (and
   * counted): a front-end that cannot keep up loses datagrams, the link loses nothing.
   */
  maxPendingSends?: number;
}

/** `:7701`, `7701`, `HOST:7701` or `HOST` (port 7701): where the front-end port listens. */
export function parseFrontEndAddress(text: string): { host: string; port: number } {
  const i = text.lastIndexOf(':');
  const hostText = i < 0 ? (/^\d+$/.test(text) ? '' : text) : text.slice(0, i);
  const portText = i < 0 ? (/^\d+$/.test(text) ? text : '') : text.slice(i + 1);
  const port = portText === '' ? QSPY_FRONTEND_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`front-end port '${text}': the port must be 0..65535 (qspy's is 7701), as in frontend=:7701`);
  }
  return { host: hostText === '' ? '0.0.0.0' : hostText, port };
}

/**
 * The UDP socket of a front-end port: the thin shell around `QspyFrontEnd`. IPv4, because
 * qutest.py and QView open AF_INET sockets (`localhost` is 127.0.0.1 to them).
 */
export class FrontEndPort {
  private socket: Socket | undefined;
  private pending = 0;
  private droppedSends = 0;
  private readonly maxPending: number;

  constructor(private readonly options: FrontEndPortOptions) {
    this.maxPending = options.maxPendingSends ?? 1024;
  }

  /** The port actually bound (useful with port 0). */
  get port(): number {
    return this.socket?.address().port ?? this.options.port;
  }

  get description(): string {
    return `udp ${this.options.host}:${this.port}`;
  }

  status(): FrontEndStatus & { listening: string; droppedSends: number } {
    return { ...this.options.frontEnd.status(), listening: this.description, droppedSends: this.droppedSends };
  }

  async start(): Promise<void> {
    const socket = createSocket({ type: 'udp4' });
    this.socket = socket;
    socket.on('message', (msg, rinfo) =>
      this.options.frontEnd.datagram(msg, { address: rinfo.address, port: rinfo.port }, Date.now()),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.options.port, this.options.host, () => {
        socket.off('error', reject);
        // A send that fails (a front-end that vanished) must never stop the port.
        socket.on('error', () => {});
        resolve();
      });
    });
  }

  /** Sends one datagram without waiting; drops it if too many are still queued. */
  send(datagram: Uint8Array, to: FrontEndPeer): void {
    const socket = this.socket;
    if (!socket) return;
    if (this.pending >= this.maxPending) {
      this.droppedSends++;
      return;
    }
    this.pending++;
    socket.send(datagram, to.port, to.address, () => {
      this.pending--;
    });
  }

  /** Frees the port from its holder, who gets DETACH. */
  release(): void {
    this.options.frontEnd.release();
  }

  /** Sends DETACH to the attached front-end (as qspy does when it exits), then closes. */
  async stop(): Promise<void> {
    this.options.frontEnd.shutdown();
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return;
    // Let the DETACH leave before the socket closes (a quarter second at most).
    for (let i = 0; i < 50 && this.pending > 0; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}
