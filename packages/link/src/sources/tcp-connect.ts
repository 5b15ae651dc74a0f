import net from 'node:net';
import type { LinkSink, LinkSource } from '../link-source.js';
import { Reopener } from './reopener.js';
import { writeSocket } from './tcp-listen.js';

/** `tcp-connect:HOST:PORT`: we connect to a target or trace box, and reconnect with backoff. */
export class TcpConnectSource implements LinkSource {
  readonly kind = 'tcp-connect';
  private socket: net.Socket | undefined;
  private readonly reconnector = new Reopener({ fromMs: 250, maxMs: 5000 });
  readonly description: string;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.description = `tcp-connect ${host}:${port}`;
  }

  async start(sink: LinkSink): Promise<void> {
    this.reconnector.start(() => this.connect(sink));
  }

  private connect(sink: LinkSink): void {
    const socket = net.connect({ host: this.host, port: this.port });
    let opened = false;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      opened = true;
      this.reconnector.opened();
      this.socket = socket;
      sink.connected(`${this.host}:${this.port}`);
    });
    socket.on('data', (data) => sink.data(data));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      if (opened) sink.disconnected('connection closed');
      this.reconnector.retry();
    });
  }

  async stop(): Promise<void> {
    this.reconnector.stop();
    this.socket?.destroy();
  }

  write(bytes: Uint8Array): Promise<number> {
    return writeSocket(this.socket, bytes);
  }
}
