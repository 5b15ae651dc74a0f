import net from 'node:net';
import { type LinkAdmission, type LinkSink, type LinkSource, LinkWriteError } from '../link-source.js';

/** What a tcp-listen link does when a target connects while another is connected. */
export type SecondTargetPolicy = 'replace' | 'refuse';

export interface TcpListenOptions {
  /**
   * 'replace' (default): the new connection takes the link and the old one is closed (a
   * target that rebooted reconnects while its old connection may still look open);
   * 'refuse': the new one is closed at once.
   */
  secondTarget?: SecondTargetPolicy;
  /** A connection that sends nothing for this long after it opens is closed, ms (0: never). */
  idleTimeoutMs?: number;
}

/**
 * `tcp-listen:HOST:PORT`: the target connects to us (QP/Spy targets connect to port 6601,
 * where qspy listens, so a target built for qspy streams to tracehub unchanged). One target
 * at a time: a second connection replaces the first or is refused (`secondTarget`), and a
 * connection that stays silent past `idleTimeoutMs` is closed, so an idle client cannot hold
 * the link. Each of these is told to the sink (logged and counted there).
 */
export class TcpListenSource implements LinkSource {
  readonly kind = 'tcp-listen';
  private server: net.Server | undefined;
  private socket: net.Socket | undefined;
  private readonly secondTarget: SecondTargetPolicy;
  private readonly idleTimeoutMs: number;
  private readonly configuredPort: number;

  constructor(
    private readonly host: string,
    private port: number,
    options: TcpListenOptions = {},
  ) {
    this.configuredPort = port;
    this.secondTarget = options.secondTarget ?? 'replace';
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  }

  /** `tcp-listen HOST:PORT`, with the port actually listened on once started (port 0 picks one). */
  get description(): string {
    return `tcp-listen ${this.host}:${this.port}`;
  }

  get listensOn() {
    return { host: this.host, port: this.configuredPort, transport: 'tcp' as const };
  }

  /** The port actually listened on (useful with port 0). */
  get boundPort(): number {
    return this.port;
  }

  get admission(): LinkAdmission {
    return { secondTarget: this.secondTarget, idleTimeoutMs: this.idleTimeoutMs };
  }

  /** Who is connected now (`address:port`), if anyone. */
  get connectedTarget(): string | undefined {
    return this.socket ? peer(this.socket) : undefined;
  }

  async start(sink: LinkSink): Promise<void> {
    this.server = net.createServer((socket) => {
      socket.on('error', () => {});
      if (this.socket) {
        if (this.secondTarget === 'refuse') {
          sink.connectionEvent?.('refused', peer(socket), `${peer(this.socket)} is connected`);
          socket.destroy();
          return;
        }
        const old = this.socket;
        sink.connectionEvent?.('replaced', peer(old), `${peer(socket)} connected`);
        this.socket = undefined;
        old.destroy();
      }
      this.socket = socket;
      socket.setNoDelay(true);
      sink.connected(peer(socket));
      let idleTimer: NodeJS.Timeout | undefined;
      if (this.idleTimeoutMs > 0) {
        idleTimer = setTimeout(() => {
          sink.connectionEvent?.('idle-closed', peer(socket), `no byte within ${this.idleTimeoutMs} ms`);
          socket.destroy();
        }, this.idleTimeoutMs);
      }
      socket.on('data', (data) => {
        if (idleTimer) {
          clearTimeout(idleTimer);
          idleTimer = undefined;
        }
        if (this.socket === socket) sink.data(data);
      });
      socket.on('close', () => {
        clearTimeout(idleTimer);
        // A replaced connection's session was already ended by the new one's.
        if (this.socket !== socket) return;
        this.socket = undefined;
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

function peer(socket: net.Socket): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

export function writeSocket(socket: net.Socket | undefined, bytes: Uint8Array): Promise<number> {
  if (!socket || socket.destroyed) return Promise.reject(new LinkWriteError('the target is not connected'));
  return new Promise((resolve, reject) =>
    socket.write(bytes, (err) => (err ? reject(new LinkWriteError(err.message)) : resolve(bytes.length))),
  );
}
