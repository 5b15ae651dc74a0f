import { Backoff } from '@tracehub/contracts';

/**
 * Opens a link again and again while it is wanted: after a failed open or a lost connection
 * it waits (doubling from `fromMs` up to `maxMs`) and tries again; an open that succeeds
 * starts the waits afresh.
 */
export class Reopener {
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly waits: Backoff;
  private open: () => void = () => {};

  constructor(delays: { fromMs: number; maxMs: number }) {
    this.waits = new Backoff(delays);
  }

  /** Opens now, and again through `retry()` until stopped. */
  start(open: () => void): void {
    this.open = open;
    this.tryOpen();
  }

  /** The open succeeded: the next wait is the first one again. */
  opened(): void {
    this.waits.reset();
  }

  /** The open failed or the connection ended: open again after the next wait. */
  retry(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.tryOpen(), this.waits.next());
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private tryOpen(): void {
    if (!this.stopped) this.open();
  }
}
