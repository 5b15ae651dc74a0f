// A rig's target as a tcp-listen link sees it: a TCP client of the gateway's port.
import net from 'node:net';

/** Connects to `127.0.0.1:port` as a target does; rejects when nothing listens there. */
export function connectTarget(port: number): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/**
 * `connectTarget`, trying again every 100 ms (`tries` times at the most) while a gateway that is
 * starting does not listen yet.
 */
export async function connectTargetOnceListening(port: number, tries = 100): Promise<net.Socket> {
  for (let i = 1; ; i++) {
    try {
      return await connectTarget(port);
    } catch (error) {
      if (i >= tries) throw new Error(`nothing listens on port ${port} after ${tries} tries`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A target's connection, its address as the gateway sees it, and whether (and when) the gateway closed it. */
export interface WatchedTarget {
  socket: net.Socket;
  address: string;
  closed: Promise<void>;
}

/** `connectTarget`, and a watch on the connection: an error after connecting only closes it. */
export async function connectWatchedTarget(port: number): Promise<WatchedTarget> {
  const socket = await connectTarget(port);
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, address: `127.0.0.1:${socket.localPort}`, closed };
}

/**
 * A first target connects to `port` and sends `bytes`; `pauseMs` later a second one connects:
 * what a tcp-listen link's `secondTarget` setting decides between.
 */
export async function secondTargetAfterFirst(
  port: number,
  bytes: Uint8Array,
  pauseMs: number,
): Promise<{ first: WatchedTarget; second: WatchedTarget }> {
  const first = await connectWatchedTarget(port);
  first.socket.write(bytes);
  await new Promise((r) => setTimeout(r, pauseMs));
  return { first, second: await connectWatchedTarget(port) };
}

/** Writes `bytes` to the socket; resolves once they are handed to the system. */
export function writeTo(socket: net.Socket, bytes: Uint8Array): Promise<void> {
  return new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
}

/**
 * Writes `bytes` to the target `pieceBytes` at a time, pausing `everyMs` after each piece; after
 * piece `i` and its pause, `afterPiece(i)` runs (to act on the link mid-stream).
 */
export async function streamInPieces(
  socket: net.Socket,
  bytes: Uint8Array,
  pieceBytes: number,
  everyMs: number,
  afterPiece: (i: number, at: number) => Promise<void>,
): Promise<void> {
  for (let at = 0, i = 0; at < bytes.length; at += pieceBytes, i++) {
    await writeTo(socket, bytes.subarray(at, at + pieceBytes));
    await new Promise((r) => setTimeout(r, everyMs));
    await afterPiece(i, at);
  }
}
