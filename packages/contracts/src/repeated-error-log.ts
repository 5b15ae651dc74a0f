import type { Log } from './log.js';

const describeError = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The log of a failure that repeats while something is away (Postgres refusing connections
 * every second, a tick failing every 500 ms): one line when it starts or its message changes,
 * one line with the count every `summaryMs` while it lasts, and one when it ends. A log of
 * hundreds of identical lines hides what else happened.
 */
export class RepeatedErrorLog {
  private current: string | undefined;
  private since = 0;
  private repeats = 0;
  private lastSummary = 0;

  constructor(
    private readonly log: Log,
    private readonly what: string,
    private readonly summaryMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** A failure: logged when it is new (or different), counted otherwise. */
  failed(err: unknown): void {
    const message = describeError(err);
    const now = this.now();
    if (message !== this.current) {
      this.current = message;
      this.since = now;
      this.lastSummary = now;
      this.repeats = 0;
      this.log.error({ err }, `${this.what}: ${message}`);
      return;
    }
    this.repeats++;
    if (now - this.lastSummary >= this.summaryMs) {
      this.lastSummary = now;
      this.log.warn(
        { repeats: this.repeats },
        `${this.what} still failing (${this.repeats} more times in ${Math.round((now - this.since) / 1000)} s): ${message}`,
      );
    }
  }

  /** A success: ends a run of failures with one line. */
  succeeded(): void {
    if (this.current === undefined) return;
    const failures = this.repeats + 1;
    this.log.info(
      { repeats: this.repeats },
      `${this.what} works again after ${Math.round((this.now() - this.since) / 1000)} s (${failures} failure${failures === 1 ? '' : 's'})`,
    );
    this.current = undefined;
  }
}
