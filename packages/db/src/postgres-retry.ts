import { Backoff } from '@tracehub/contracts';
import { isDataError } from './postgres-errors.js';

/** Waits between tries of a write while Postgres is away, ms: doubling from 200 ms up to 5 s. */
const POSTGRES_RETRY = { fromMs: 200, maxMs: 5000 };

export interface PostgresRetryOptions {
  /** Waits `ms` before the next try (default a plain timer): a caller holding messages keeps them meanwhile. */
  wait?(ms: number): Promise<void>;
  /** Called after each try that failed for another reason than its data (Postgres away, a deadlock), the first numbered 1. */
  onFailure?(err: unknown, attempt: number): void;
}

/** What came of a write: its value, or the data error Postgres refused it with; and the tries it took. */
export type PostgresRetryResult<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; refused: unknown; attempts: number };

/**
 * Runs `write` until it succeeds, waiting longer after each failure (`POSTGRES_RETRY`), for
 * as long as Postgres is away: nothing is given up because the database went down. A write
 * Postgres refuses as data (`isDataError`) is not tried again: its error comes back as
 * `refused`, for the caller to keep or drop what could not be written.
 */
export async function retryPostgres<T>(
  write: () => Promise<T>,
  options: PostgresRetryOptions = {},
): Promise<PostgresRetryResult<T>> {
  const backoff = new Backoff(POSTGRES_RETRY);
  const wait = options.wait ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempts = 1; ; attempts++) {
    try {
      return { ok: true, value: await write(), attempts };
    } catch (err) {
      if (isDataError(err)) return { ok: false, refused: err, attempts };
      options.onFailure?.(err, attempts);
      await wait(backoff.next());
    }
  }
}
