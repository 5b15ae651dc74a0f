import net from 'node:net';
import { type LinkSink, type LinkSource, LinkWriteError } from '../link-source.js';

/**
 * `tcp-listen:HOST:PORT`: the target connects to us (QP/Spy targets connect to port 6601,
 * where qspy listens, so a target built for qspy streams to tracehub unchanged). One target
 * at a time: a second connection while one is open is refused.
 */
export class TcpListenSource implements LinkSource {
  private server: net.Server | undefined;
  private socket: net.Socket | undefined;
  readonly description: string;

  constructor(
    private readonly host: string,
    private port: number,
  ) {
    this.description = `tcp-listen ${host}:${port}`;
  }

  /** The port actually listened on (useful with port 0). */
  get boundPort(): number {
    return this.port;
  }

  async start(sink: LinkSink): Promise<void> {
    this.server = net.createServer((socket) => {
      if (this.socket) {
        socket.destroy();
        return;
      }
      this.socket = socket;
      socket.setNoDelay(true);
      sink.connected(`${socket.remoteAddress}:${socket.remotePort}`);
      socket.on('data', (data) => sink.data(data));
      socket.on('error', () => {});
      socket.on('close', () => {
        if (this.socket === socket) this.socket = undefined;
        sink.disconnected('target closed the connection');
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.port, this.host, () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.socket?.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  write(bytes: Uint8Array): Promise<number> {
    return writeSocket(this.socket, bytes);
  }
}

export function writeSocket(socket: net.Socket | undefined, bytes: Uint8Array): Promise<number> {
  if (!socket || socket.destroyed) return Promise.reject(new LinkWriteError('the target is not connected'));
  return new Promise((resolve, reject) =>
    socket.write(bytes, (err) => (err ? reject(new LinkWriteError(err.message)) : resolve(bytes.length))),
  );
}
