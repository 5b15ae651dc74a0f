import { read } from 'node:fs';
import { promisify } from 'node:util';
import type { SerialBinding } from './serial.js';

const readAsync = promisify(read);

/** What a Unix port of bindings-cpp has beyond the binding interface: its descriptor and poller. */
interface UnixPort {
  fd: number | null;
  readonly isOpen: boolean;
  readonly poller: { once(event: 'readable', callback: (err?: Error | null) => void): unknown };
  read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }>;
}

function isUnixPort(port: object): port is UnixPort {
  return 'fd' in port && 'poller' in port && typeof (port as { fd: unknown }).fd === 'number';
}

/**
 * A binding whose ports report a hang-up as a disconnect. When the far end of a tty goes away
 * (a USB adapter unplugged, a pseudo-terminal's master closed) the kernel hangs the tty up and
 * every read returns 0 bytes. bindings-cpp reads again on 0 bytes, without end: unless the
 * hang-up happened while a read was parked on the poller, the port never closed, the session
 * never ended and a libuv thread spun. bindings-cpp opens ports with VMIN=1, so a 0-byte read
 * can only mean the hang-up. Ports that are not Unix file descriptors are left as they are.
 */
export function hangUpAwareBinding(inner: SerialBinding): SerialBinding {
  return {
    list: () => inner.list(),
    async open(options) {
      const port = await inner.open(options);
      if (isUnixPort(port)) port.read = (buffer, offset, length) => readUntilHangUp(port, buffer, offset, length);
      return port;
    },
  };
}

async function readUntilHangUp(
  port: UnixPort,
  buffer: Buffer,
  offset: number,
  length: number,
): Promise<{ buffer: Buffer; bytesRead: number }> {
  for (;;) {
    // `canceled`: the stream takes it as a close of ours, not as the port lost.
    if (!port.isOpen || port.fd === null) throw Object.assign(new Error('Port is not open'), { canceled: true });
    try {
      const { bytesRead } = await readAsync(port.fd, buffer, offset, length, null);
      if (bytesRead === 0) throw Object.assign(new Error('the port hung up (it read 0 bytes)'), { disconnect: true });
      return { buffer, bytesRead };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK' && code !== 'EINTR') throw err;
      await new Promise<void>((resolve, reject) => port.poller.once('readable', (e) => (e ? reject(e) : resolve())));
    }
  }
}
