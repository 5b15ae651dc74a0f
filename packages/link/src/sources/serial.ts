import { Backoff } from '@tracehub/contracts';
import { SerialPort } from 'serialport';
import { type LinkSink, type LinkSource, LinkWriteError } from '../link-source.js';

/**
 * `serial:/dev/ttyX?baud=115200`: a serial port, 8N1. Each successful open is a link session;
 * when the port goes away (USB unplugged) it is reopened with backoff.
 */
export class SerialSource implements LinkSource {
  readonly kind = 'serial';
  private port: SerialPort | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly reopen = new Backoff({ fromMs: 500, maxMs: 5000 });
  readonly description: string;

  constructor(
    private readonly path: string,
    private readonly baudRate: number,
  ) {
    this.description = `serial ${path} ${baudRate} 8N1`;
  }

  async start(sink: LinkSink): Promise<void> {
    this.open(sink);
  }

  private open(sink: LinkSink): void {
    if (this.stopped) return;
    const port = new SerialPort({
      path: this.path,
      baudRate: this.baudRate,
      dataBits: 8,
      parity: 'none',
      stopBits: 1,
      autoOpen: false,
    });
    port.open((err) => {
      if (err) {
        this.retry(sink);
        return;
      }
      this.reopen.reset();
      this.port = port;
      sink.connected(this.description);
      port.on('data', (data: Buffer) => sink.data(data));
      port.on('error', () => {});
      port.on('close', () => {
        if (this.port === port) this.port = undefined;
        sink.disconnected('serial port closed');
        this.retry(sink);
      });
    });
  }

  private retry(sink: LinkSink): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => this.open(sink), this.reopen.next());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const port = this.port;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  write(bytes: Uint8Array): Promise<number> {
    const port = this.port;
    if (!port?.isOpen) return Promise.reject(new LinkWriteError('the serial port is not open'));
    return new Promise((resolve, reject) =>
      port.write(Buffer.from(bytes), (err) => {
        if (err) return reject(new LinkWriteError(err.message));
        port.drain(() => resolve(bytes.length));
      }),
    );
  }
}
