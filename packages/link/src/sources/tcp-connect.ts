import net from 'node:net';
import { Backoff } from '@tracehub/contracts';
import type { LinkSink, LinkSource } from '../link-source.js';
import { writeSocket } from './tcp-listen.js';

/** `tcp-connect:HOST:PORT`: we connect to a target or trace box, and reconnect with backoff. */
export class TcpConnectSource implements LinkSource {
  readonly kind = 'tcp-connect';
  private socket: net.Socket | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly reconnect = new Backoff({ fromMs: 250, maxMs: 5000 });
  readonly description: string;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.description = `tcp-connect ${host}:${port}`;
  }

  async start(sink: LinkSink): Promise<void> {
    this.connect(sink);
  }

  private connect(sink: LinkSink): void {
    if (this.stopped) return;
    const socket = net.connect({ host: this.host, port: this.port });
    let opened = false;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      opened = true;
      this.reconnect.reset();
      this.socket = socket;
      sink.connected(`${this.host}:${this.port}`);
    });
    socket.on('data', (data) => sink.data(data));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      if (opened) sink.disconnected('connection closed');
      if (this.stopped) return;
      this.retryTimer = setTimeout(() => this.connect(sink), this.reconnect.next());
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.socket?.destroy();
  }

  write(bytes: Uint8Array): Promise<number> {
    return writeSocket(this.socket, bytes);
  }
}
