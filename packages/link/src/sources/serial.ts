import { SerialPortStream } from '@serialport/stream';
import { SerialPort } from 'serialport';
import { type LinkSink, type LinkSource, LinkWriteError } from '../link-source.js';
import { Reopener } from './reopener.js';
import { hangUpAwareBinding } from './serial-hang-up.js';

/** How serialport drives a port: open, read, write, set the line (its `BindingInterface`). */
export type SerialBinding = ConstructorParameters<typeof SerialPortStream>[0]['binding'];

/** The operating system's serialport binding (bindings-cpp), as `SerialSource` uses it by default. */
export const systemSerialBinding: SerialBinding = SerialPort.binding;

export interface SerialSourceOptions {
  /**
   * How the port is driven (default: the operating system's, `SerialPort.binding`). A port
   * whose line cannot carry a break (a pseudo-terminal) can be given one that reports it.
   */
  binding?: SerialBinding;
}

/**
 * `serial:/dev/ttyX?baud=115200`: a serial port, 8N1. Each successful open is a link session;
 * when the port goes away (USB unplugged) it is reopened with backoff.
 */
export class SerialSource implements LinkSource {
  readonly kind = 'serial';
  private port: SerialPortStream | undefined;
  private readonly reopener = new Reopener({ fromMs: 500, maxMs: 5000 });
  readonly description: string;
  private readonly binding: SerialBinding;

  constructor(
    private readonly path: string,
    private readonly baudRate: number,
    options: SerialSourceOptions = {},
  ) {
    this.description = `serial ${path} ${baudRate} 8N1`;
    this.binding = hangUpAwareBinding(options.binding ?? systemSerialBinding);
  }

  async start(sink: LinkSink): Promise<void> {
    this.reopener.start(() => this.open(sink));
  }

  private open(sink: LinkSink): void {
    const port = new SerialPortStream({
      binding: this.binding,
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

  /**
   * Holds the line in break (TIOCSBRK) for `ms`, then releases it (TIOCCBRK). The binding sets
   * the modem lines with it (TIOCMSET): a port without them (a pseudo-terminal) refuses, and
   * the upload fails as a write does.
   */
  async sendBreak(ms: number): Promise<void> {
    const port = this.openPort();
    const set = (brk: boolean) =>
      new Promise<void>((resolve, reject) =>
        port.set({ brk }, (err) => (err ? reject(new LinkWriteError(`break: ${err.message}`)) : resolve())),
      );
    try {
      await set(true);
    } catch (err) {
      // The break may be on though the call failed (TIOCSBRK comes before TIOCMSET): release it.
      await set(false).catch(() => {});
      throw err;
    }
    await new Promise((r) => setTimeout(r, ms));
    await set(false);
  }

  async setBitRate(bitsPerSecond: number): Promise<void> {
    const port = this.openPort();
    await new Promise<void>((resolve, reject) =>
      port.update({ baudRate: bitsPerSecond }, (err) => (err ? reject(new LinkWriteError(err.message)) : resolve())),
    );
  }

  private openPort(): SerialPortStream {
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
