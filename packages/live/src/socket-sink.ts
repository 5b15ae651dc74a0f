import type { Socket } from 'node:net';
import type { MissedReason, OutletSink } from './outlet.js';

/** Encoded messages as they go into an outlet: the bytes of one or more messages, and how many. */
export interface ByteChunk {
  bytes: Uint8Array;
  messages: number;
}

/** What a connection sent, for its status and metrics. */
export interface SendCounters {
  /** Messages handed to the socket (records' messages and dropped notices). */
  messagesSent: number;
  bytesSent: number;
}

/**
 * A TCP connection as an outlet's sink: writes while the socket wants more, then waits for
 * 'drain'; a missed count becomes one message (`notice`) that says how many records and why.
 */
export function socketSink(
  socket: Socket,
  counters: SendCounters,
  notice: (records: number, reason: MissedReason) => Uint8Array,
): OutletSink<ByteChunk> {
  const write = (bytes: Uint8Array, messages: number) => {
    if (socket.destroyed) return false;
    counters.messagesSent += messages;
    counters.bytesSent += bytes.length;
    return socket.write(bytes);
  };
  return {
    write: (chunk) => write(chunk.bytes, chunk.messages),
    missed: (records, reason) => write(notice(records, reason), 1),
    whenWritable: (resume) => socket.once('drain', resume),
  };
}
