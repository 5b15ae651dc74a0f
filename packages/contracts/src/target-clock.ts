/**
 * The target's clock of one link session, from the raw timestamps its records carry: a
 * counter of `bits` bits that wraps to 0 (QS: 16 or 32 bits, QS_TIME_SIZE) is unwrapped into
 * a tick count that only grows, and a target reset starts a new segment, whose ticks count
 * from the stamps after the reset again (the counter restarted; how long the target was away
 * is not in the stream). A record without a stamp of its own (QS records printed without one,
 * a transition's steps) takes the time of the last stamped record of its segment.
 *
 * A wrap is a stamp lower than the one before it: a counter that wraps more than once
 * between two records, or a reset no record announces, cannot be told from the stream.
 */
export class TargetClock {
  private segmentNumber = 0;
  /** Ticks of the wraps seen in this segment: added to every raw stamp. */
  private wrapTicks = 0n;
  private lastStamp: bigint | null = null;
  private lastTime: bigint | null = null;
  private period: bigint;

  /** @param bits width of the target's timestamp counter (64: never wraps). */
  constructor(private bits = 32) {
    this.period = periodOf(bits);
  }

  /** The counter is `bits` wide from now on (a target info announcing its timestamp size). */
  setWidth(bits: number): void {
    this.bits = bits;
    this.period = periodOf(bits);
  }

  /**
   * A target reset: the next stamp starts a new segment. A reset before any stamp of the
   * current segment (the start-up target info) starts none.
   */
  reset(): void {
    if (this.lastStamp === null) return;
    this.segmentNumber++;
    this.wrapTicks = 0n;
    this.lastStamp = null;
    this.lastTime = null;
  }

  /** The target time (unwrapped ticks) of a record with stamp `stamp` (null: no stamp of its own). */
  timeOf(stamp: bigint | null): bigint | null {
    if (stamp === null) return this.lastTime;
    if (this.lastStamp !== null && stamp < this.lastStamp && this.period > 0n) this.wrapTicks += this.period;
    this.lastStamp = stamp;
    // Until the first wrap (and on a 64-bit counter, always) the time is the stamp itself: no new bigint a record.
    this.lastTime = this.wrapTicks === 0n ? stamp : stamp + this.wrapTicks;
    return this.lastTime;
  }

  /** The segment (0 for the session's first, one more after each target reset) records are in now. */
  get segment(): number {
    return this.segmentNumber;
  }

  toJSON(): TargetClockState {
    return {
      bits: this.bits,
      segment: this.segmentNumber,
      wrapTicks: this.wrapTicks.toString(),
      lastStamp: this.lastStamp === null ? null : this.lastStamp.toString(),
      lastTime: this.lastTime === null ? null : this.lastTime.toString(),
    };
  }

  static fromJSON(state: TargetClockState): TargetClock {
    const clock = new TargetClock(state.bits);
    clock.segmentNumber = state.segment;
    clock.wrapTicks = BigInt(state.wrapTicks);
    clock.lastStamp = state.lastStamp === null ? null : BigInt(state.lastStamp);
    clock.lastTime = state.lastTime === null ? null : BigInt(state.lastTime);
    return clock;
  }
}

/** A TargetClock as plain JSON (in a decoder's snapshot). */
export interface TargetClockState {
  [key: string]: number | string | null;
  bits: number;
  segment: number;
  wrapTicks: string;
  lastStamp: string | null;
  lastTime: string | null;
}

/** How many ticks a `bits`-wide counter counts before it wraps (0n: it does not). */
function periodOf(bits: number): bigint {
  return bits >= 64 || bits <= 0 ? 0n : 1n << BigInt(bits);
}
