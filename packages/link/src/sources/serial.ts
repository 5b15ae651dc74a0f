import { SerialPort } from 'serialport';
import { type LinkSink, type LinkSource, LinkWriteError } from '../link-source.js';
import { Reopener } from './reopener.js';

/**
 * `serial:/dev/ttyX?baud=115200`: a serial port, 8N1. Each successful open is a link session;
 * when the port goes away (USB unplugged) it is reopened with backoff.
 */
export class SerialSource implements LinkSource {
  readonly kind = 'serial';
  private port: SerialPort | undefined;
  private readonly reopener = new Reopener({ fromMs: 500, maxMs: 5000 });
  readonly description: string;

  constructor(
    private readonly path: string,
    private readonly baudRate: number,
  ) {
    this.description = `serial ${path} ${baudRate} 8N1`;
  }

  async start(sink: LinkSink): Promise<void> {
    this.reopener.start(() => this.open(sink));
  }

  private open(sink: LinkSink): void {
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
        this.reopener.retry();
        return;
      }
      this.reopener.opened();
      this.port = port;
      sink.connected(this.description);
      port.on('data', (data: Buffer) => sink.data(data));
      port.on('error', () => {});
      port.on('close', () => {
        if (this.port === port) this.port = undefined;
        sink.disconnected('serial port closed');
        this.reopener.retry();
      });
    });
  }

  async stop(): Promise<void> {
    this.reopener.stop();
    const port = this.port;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  async sendBreak(ms: number): Promise<void> {
    const port = this.openPort();
    await new Promise<void>((resolve, reject) => port.set({ brk: true }, (err) => (err ? reject(err) : resolve())));
    await new Promise((r) => setTimeout(r, ms));
    await new Promise<void>((resolve, reject) => port.set({ brk: false }, (err) => (err ? reject(err) : resolve())));
  }

  async setBitRate(bitsPerSecond: number): Promise<void> {
    const port = this.openPort();
    await new Promise<void>((resolve, reject) =>
      port.update({ baudRate: bitsPerSecond }, (err) => (err ? reject(new LinkWriteError(err.message)) : resolve())),
    );
  }

  private openPort(): SerialPort {
    const port = this.port;
    if (!port?.isOpen) throw new LinkWriteError('the serial port is not open');
    return port;
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
