import { randomBytes } from 'node:crypto';

// Wall-clock nanoseconds from a monotonic source: read the epoch once, then count hrtime.
const epochBaseNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Receive time in ns since the Unix epoch, monotonic within the process. */
export function nowNs(): bigint {
  return epochBaseNs + process.hrtime.bigint();
}

/** A new link-session id: time-ordered, unique, safe in subjects and message ids. */
export function newSessionId(): string {
  return `${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`;
}
