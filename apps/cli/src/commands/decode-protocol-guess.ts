import { closeSync, openSync, readSync } from 'node:fs';
import { extname } from 'node:path';

/** A protocol `decode` chose by itself, and why, for the line it prints. */
export interface ProtocolGuess {
  protocol: 'qs' | 'stp' | 'swd';
  from: string;
}

const BY_EXTENSION: Record<string, ProtocolGuess['protocol']> = { '.qs': 'qs', '.stp': 'stp', '.swd': 'swd' };

/**
 * The protocol of a capture without -p: from its extension (.qs, .stp, .swd), else from its
 * first 4 KiB. An STP v2 stream begins (and resynchronises) with ASYNC, ten or more 0xFF bytes
 * in a row; QS frames each end with the 0x7E flag, about one byte in twenty of a QS capture
 * (one in sixty-four at least is asked for; STP data seldom comes close). Undefined: neither.
 */
export function guessProtocol(file: string): ProtocolGuess | undefined {
  const byName = BY_EXTENSION[extname(file).toLowerCase()];
  if (byName) return { protocol: byName, from: `its ${extname(file)} extension` };
  const head = Buffer.alloc(4096);
  const fd = openSync(file, 'r');
  let length: number;
  try {
    length = readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  let run = 0;
  let flags = 0;
  for (let i = 0; i < length; i++) {
    const byte = head[i];
    run = byte === 0xff ? run + 1 : 0;
    if (run >= 10) return { protocol: 'stp', from: 'its first bytes, an STP ASYNC' };
    if (byte === 0x7e) flags++;
  }
  if (flags >= 4 && flags * 64 >= length) return { protocol: 'qs', from: 'its first bytes, QS frame flags' };
  return undefined;
}
