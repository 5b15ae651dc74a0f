/**
 * What a failed Postgres statement means to its caller, by the error's SQLSTATE (or the
 * driver's socket code): the one classification the services share.
 *
 * - `data`: Postgres refused the data itself (class 22, data exception: bad JSON, a value out
 *   of range; class 23, integrity constraint: a missing or ill-typed field). Writing it again
 *   cannot succeed.
 * - `statement-timeout`: the statement ran past `statement_timeout` and was stopped (57014).
 * - `unavailable`: Postgres could not be reached or went away (a refused or reset socket,
 *   class 08 connection exception, 57P01..57P03 shutting down or not yet accepting).
 *   Trying again later may succeed.
 * - `other`: anything else (a deadlock, a serialization failure, a bug).
 */
export type PostgresFailure = 'data' | 'statement-timeout' | 'unavailable' | 'other';

/** Postgres's query_canceled: here, a statement stopped by the pool's statement_timeout. */
const STATEMENT_TIMEOUT = '57014';

/** Socket errors of the driver and server states that mean Postgres is away, not that the statement was wrong. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
]);

/** The driver's words for a connection that failed or ended, where it gives no code. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i;

export function postgresFailureOf(err: unknown): PostgresFailure {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('22') || code.startsWith('23')) return 'data';
  if (code === STATEMENT_TIMEOUT) return 'statement-timeout';
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return 'unavailable';
  const message = typeof e.message === 'string' ? e.message : '';
  return UNAVAILABLE_MESSAGE.test(message) ? 'unavailable' : 'other';
}

/** Postgres refused the data itself: writing it again cannot succeed. */
export function isDataError(err: unknown): boolean {
  return postgresFailureOf(err) === 'data';
}
