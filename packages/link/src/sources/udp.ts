import dgram from 'node:dgram';
import { type LinkSink, type LinkSource, LinkWriteError } from '../link-source.js';

/**
 * `udp:HOST:PORT`: datagrams from the target. UDP has no connection, so the session starts
 * with the first datagram and lasts until the gateway stops; replies go to the last sender.
 */
export class UdpSource implements LinkSource {
  readonly kind = 'udp';
  private socket: dgram.Socket | undefined;
  private peer: { address: string; port: number } | undefined;
  readonly description: string;
  readonly listensOn: { host: string; port: number; transport: 'udp' };

  constructor(
    private readonly host: string,
    private port: number,
  ) {
    this.description = `udp ${host}:${port}`;
    this.listensOn = { host, port, transport: 'udp' };
  }

  get boundPort(): number {
    return this.port;
  }

  async start(sink: LinkSink): Promise<void> {
    const socket = dgram.createSocket(this.host.includes(':') ? 'udp6' : 'udp4');
    this.socket = socket;
    socket.on('message', (data, rinfo) => {
      if (!this.peer) sink.connected(`${rinfo.address}:${rinfo.port}`);
      this.peer = { address: rinfo.address, port: rinfo.port };
      sink.data(data);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.port, this.host, () => resolve());
    });
    this.port = socket.address().port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.socket ? this.socket.close(() => resolve()) : resolve()));
  }

  write(bytes: Uint8Array): Promise<number> {
    const { socket, peer } = this;
    if (!socket || !peer) return Promise.reject(new LinkWriteError('no datagram has come from the target yet'));
    return new Promise((resolve, reject) =>
      socket.send(bytes, peer.port, peer.address, (err) =>
        err ? reject(new LinkWriteError(err.message)) : resolve(bytes.length),
      ),
    );
  }
}
