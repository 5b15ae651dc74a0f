/**
 * Turns at decoding, shared by the links of one worker, so that its event loop comes round
 * often whatever the number of links. Each link decodes in its own async loop, and decoding is
 * synchronous: when the publish acknowledgements of 190 links came in one read, all 190 decoded
 * their next chunks before the loop came round again, and on a saturated machine its timers
 * ran 1.3–2 s late (prom-client's event-loop lag, p99). Leases were then refreshed too late and
 * links stopped. Here a loop iteration decodes for at most `budgetMs`; the links that ask after
 * that wait for the next iteration (timers and I/O run in between), and go in the order of
 * their chunks' age, oldest first: a busy link has more chunks waiting than a slow one, and
 * taking links in the order they asked gave it one chunk a round like every other (on 256
 * links, the one at 921 600 baud was 2.5 times as far behind as the median link).
 */
export class DecodeTurns {
  /** When this iteration's decoding began (performance.now()); -1 before any. */
  private turnStart = -1;
  /** A link holds the turn: between a `take` that let it in and its `done`. */
  private busy = false;
  /** Links waiting for a turn, oldest chunk first (`at` ascending; equal ones in the order they asked). */
  private readonly waiting: Array<{ at: number; go: () => void }> = [];
  private nextIterationAsked = false;

  /** `now`: the clock the budget is counted on (ms; tests give their own). */
  constructor(
    private readonly budgetMs = 10,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Asks to decode a chunk received at `at` (any clock, the same for every caller): `undefined`
   * when the caller may go on at once, else a promise that resolves when it may. Every take that
   * let the caller in is followed by exactly one `done`.
   */
  take(at: number): Promise<void> | undefined {
    if (!this.busy && this.waiting.length === 0 && this.withinTurn()) {
      this.busy = true;
      return undefined;
    }
    return new Promise<void>((go) => {
      // After every waiter no younger than this one: the oldest first, ties in the order asked.
      let lo = 0;
      let hi = this.waiting.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.waiting[mid].at <= at) lo = mid + 1;
        else hi = mid;
      }
      this.waiting.splice(lo, 0, { at, go });
      this.askNextIteration();
    });
  }

  /** The caller has decoded: the next link in line goes on now if the iteration has time left. */
  done(): void {
    this.busy = false;
    if (this.waiting.length === 0) return;
    if (this.withinTurn()) this.letNextIn();
    else this.askNextIteration();
  }

  /** Links waiting for a turn now. */
  get queued(): number {
    return this.waiting.length;
  }

  private letNextIn(): void {
    this.busy = true;
    // Its continuation runs as a microtask, still in this iteration, and its `done` lets the next in.
    this.waiting.shift()!.go();
  }

  private withinTurn(): boolean {
    const now = this.now();
    if (this.turnStart < 0) {
      this.turnStart = now;
      this.askNextIteration();
      return true;
    }
    return now - this.turnStart < this.budgetMs;
  }

  /** setImmediate runs once this iteration's I/O callbacks are done: the next turn begins there. */
  private askNextIteration(): void {
    if (this.nextIterationAsked) return;
    this.nextIterationAsked = true;
    setImmediate(() => {
      this.nextIterationAsked = false;
      this.turnStart = -1;
      if (!this.busy && this.waiting.length > 0 && this.withinTurn()) this.letNextIn();
    });
  }
}
