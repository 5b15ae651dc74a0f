import type { TimestampFlag } from './constants.js';

const TIME_MASK = (1n << 60n) - 1n;

/** The 64-bit OST/PhoNet timestamp: flag in bits 63:60, time in ns in bits 59:0 (spec §9.1). */
export function outputTimestamp(flag: TimestampFlag, ns: bigint): bigint {
  return (BigInt(flag) << 60n) | (ns & TIME_MASK);
}

/** Splits an output timestamp back into its flag and its time in ns. */
export function splitOutputTimestamp(ts: bigint): { flag: number; ns: bigint } {
  return { flag: Number(ts >> 60n), ns: ts & TIME_MASK };
}

export function toBigInt64(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}
