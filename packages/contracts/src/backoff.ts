/**
 * Doubling waits with a cap, for loops that retry until something comes back (Postgres, NATS, a
 * serial port, a TCP peer). The first wait is `fromMs`, each next one twice the last, never more
 * than `maxMs`; `reset()` after a success starts again from `fromMs`.
 *
 * It lives here, not in service-kit, because `@tracehub/link` (imported by the command line)
 * must not pull in Fastify, pino and prom-client for it; every retrying package already
 * depends on contracts.
 */
export class Backoff {
  private nextMs: number;

  constructor(private readonly delays: { fromMs: number; maxMs: number }) {
    this.nextMs = delays.fromMs;
  }

  /** The wait before the next try, ms; the one after it doubles (up to the cap). */
  next(): number {
    const waitMs = this.nextMs;
    this.nextMs = Math.min(waitMs * 2, this.delays.maxMs);
    return waitMs;
  }

  /** After a success: the next wait is the first one again. */
  reset(): void {
    this.nextMs = this.delays.fromMs;
  }
}
