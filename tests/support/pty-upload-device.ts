// A traced device's side of the trace box's UART upload (reference §3.1) on a pseudo-terminal:
// `pty-upload-device.py` opens a pty (openpty) and holds its master, the gateway's serial
// link opens the slave. Bytes both ways and the bit rate cross the pty for real: the device
// reads the rate the gateway's port was set to from the pty's termios, as a device on a cable
// hears the line at the rate it is sent.
//
// The break cannot cross a pty. On Linux the pty driver has no break operation: TIOCSBRK and
// TCSBRK on the slave succeed and nothing reaches the master, not even in packet mode
// (TIOCPKT reports flushes and flow control only); and the modem-line ioctls that serialport's
// `set()` issues with the break (TIOCMSET) fail with ENOTTY. So the port's `set()` is the one
// thing taken from the gateway's side: `binding` is the operating system's serialport binding
// with `set()` replaced by the line's state, break or idle, handed to the device with the time
// it was set. Everything else the gateway does to the port goes through the real binding.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type SerialBinding, systemSerialBinding } from '@tracehub/link';
import { type DeviceBehaviour, deviceAnswers, someTrace } from './stp-upload-device.js';

type Binding = SerialBinding;
type BindingPort = Awaited<ReturnType<Binding['open']>>;

export type PtyDeviceEvent =
  | { event: 'ready'; path: string }
  | { event: 'break'; heldMs: number; bitRate: number }
  | { event: 'length'; length: number; bitRate: number }
  | { event: 'data'; hex: string; bitRate: number }
  | { event: 'stray'; hex: string };

export class PtyUploadDevice {
  /** What the device saw since the last `behave`. */
  events: PtyDeviceEvent[] = [];
  /** The serial binding the gateway's port is to use: the real one, its break handed to the device. */
  readonly binding: Binding;

  private constructor(
    private readonly child: ChildProcess,
    /** The pty's slave: the gateway's serial port. */
    readonly path: string,
  ) {
    const real = systemSerialBinding;
    const line = (brk: boolean) => this.send({ line: brk ? 'break' : 'idle', atMs: performance.now() });
    this.binding = {
      list: () => real.list(),
      async open(options) {
        const port = await real.open(options);
        return new Proxy(port, {
          get(target, key) {
            if (key === 'set')
              return async (o: Parameters<BindingPort['set']>[0]) => {
                line(o.brk === true);
              };
            const value = Reflect.get(target, key, target);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }) as BindingPort;
      },
    } as Binding;
  }

  static async start(): Promise<PtyUploadDevice> {
    const script = new URL('./pty-upload-device.py', import.meta.url).pathname;
    const child = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    const first = await new Promise<PtyDeviceEvent>((resolve, reject) => {
      lines.once('line', (l) => resolve(JSON.parse(l)));
      child.once('exit', (code) => reject(new Error(`the pty device exited (${code})`)));
    });
    if (first.event !== 'ready') throw new Error(`the pty device said ${JSON.stringify(first)}`);
    const device = new PtyUploadDevice(child, first.path);
    lines.on('line', (l) => device.events.push(JSON.parse(l)));
    return device;
  }

  /** Answers as `behaviour` says from now on, and sends some trace at once. */
  behave(behaviour: DeviceBehaviour): void {
    this.events = [];
    const a = deviceAnswers(behaviour);
    const hex = (b: Buffer | null) => b?.toString('hex') ?? null;
    this.send({
      behave: {
        answers: { rate: hex(a.rate), ackLength: hex(a.ackLength), ackData: hex(a.ackData) },
        trace: someTrace().toString('hex'),
      },
    });
  }

  /** The events of one kind seen since `behave`. */
  seen<K extends PtyDeviceEvent['event']>(kind: K): Extract<PtyDeviceEvent, { event: K }>[] {
    return this.events.filter((e): e is Extract<PtyDeviceEvent, { event: K }> => e.event === kind);
  }

  private send(command: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await exited;
  }
}
