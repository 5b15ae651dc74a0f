import { nowNs } from './clock.js';

/** How often the process checks that it runs, ns. */
const TICK_NS = 5_000_000n;
/** Lateness of a tick that is ordinary timer slack, not a stall, ns. */
const SLACK_NS = 2_000_000n;

/**
 * How long this process could not run: its event loop blocked (a long task, a collection) or
 * the machine too busy to schedule it. A gap between two reads of a link that spans such a
 * stall says nothing of the line: the bytes may have been waiting in the socket all along. So
 * an idle time is measured apart from the stalls within it (`stalledNs` at both reads).
 */
class LoopStalls {
  private stalledTotalNs = 0n;
  private lastTickNs = nowNs();

  constructor() {
    setInterval(
      () => {
        const now = nowNs();
        const late = now - this.lastTickNs - TICK_NS;
        if (late > SLACK_NS) this.stalledTotalNs += late;
        this.lastTickNs = now;
      },
      Number(TICK_NS / 1_000_000n),
    ).unref();
  }

  /**
   * Time stalled since the process started, up to `now`, ns: never less at a later `now`. A tick
   * that is overdue at `now` (a stall that has just ended, or goes on) counts already.
   */
  stalledNs(now: bigint): bigint {
    const overdue = now - this.lastTickNs - TICK_NS;
    return this.stalledTotalNs + (overdue > SLACK_NS ? overdue : 0n);
  }
}

let shared: LoopStalls | undefined;

/** The process's one stall watch, started when a link first needs it. */
export function loopStalls(): LoopStalls {
  shared ??= new LoopStalls();
  return shared;
}
