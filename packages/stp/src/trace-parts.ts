/**
 * The fields an OST (0x84) and a PhoNet (0x94) trace message share, in the same order in both:
 * master, channel, the 64-bit timestamp field (big-endian) and the data `data[0, length)`. The
 * decoder fills one of these per message and reuses it: no object and no BigInt per message.
 */
export interface TraceParts {
  master: number;
  channel: number;
  /** Timestamp field (flag in bits 63:60) as two 32-bit halves. */
  tsHi: number;
  tsLo: number;
  data: Uint8Array;
  length: number;
}

/** Trace parts of a message given with a BigInt timestamp (the public encoders' form). */
export function traceParts(master: number, channel: number, timestamp: bigint, data: Uint8Array): TraceParts {
  const ts = BigInt.asUintN(64, timestamp);
  return { master, channel, tsHi: Number(ts >> 32n), tsLo: Number(ts & 0xffffffffn), data, length: data.length };
}

/** Writes master, channel, timestamp and data at `at`; returns the offset after the data. */
export function writeTraceParts(out: Uint8Array, at: number, p: TraceParts): number {
  out[at] = p.master;
  out[at + 1] = p.channel;
  const { tsHi, tsLo } = p;
  out[at + 2] = tsHi >>> 24;
  out[at + 3] = tsHi >>> 16;
  out[at + 4] = tsHi >>> 8;
  out[at + 5] = tsHi;
  out[at + 6] = tsLo >>> 24;
  out[at + 7] = tsLo >>> 16;
  out[at + 8] = tsLo >>> 8;
  out[at + 9] = tsLo;
  const start = at + 10;
  const { data, length } = p;
  // Short messages byte by byte: cheaper than a typed-array view for a handful of bytes.
  if (length <= 64) for (let i = 0; i < length; i++) out[start + i] = data[i];
  else out.set(length === data.length ? data : data.subarray(0, length), start);
  return start + length;
}

/** A big-endian 64-bit field of `bytes` at `at`. */
export function readU64(bytes: Uint8Array, at: number): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(at);
}

/** What `writeTraceParts` writes before the data, read back from `at` (the decoders' side). */
export function readTraceHeader(p: Uint8Array, at: number): { master: number; channel: number; timestamp: bigint } {
  return { master: p[at], channel: p[at + 1], timestamp: readU64(p, at + 2) };
}
