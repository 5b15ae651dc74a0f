import { redactUrl } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import { type CreateDbOptions, createDb } from './create-db.js';
import type { Database } from './database.js';

export class DatabaseConnectError extends Error {
  override name = 'DatabaseConnectError';
}

/**
 * `createDb` and one round trip, so that a wrong DATABASE_URL, a server that is down or a
 * database that does not exist fails at start with one clear message, not at the first query.
 */
export async function connectDb(url: string, opts: CreateDbOptions = {}): Promise<Kysely<Database>> {
  const db = createDb(url, opts);
  try {
    await sql`select 1`.execute(db);
    return db;
  } catch (error) {
    await db.destroy().catch(() => {});
    throw new DatabaseConnectError(
      `cannot connect to Postgres at ${redactUrl(url)}: ${describe(error)}; check DATABASE_URL and that Postgres is running`,
      { cause: error },
    );
  }
}

/**
 * True when Postgres answers a round trip: a readiness check (a service that cannot reach
 * Postgres cannot do its job). Bound it with a timeout: a paused server never answers.
 */
export function isDatabaseReachable(db: Kysely<Database>): Promise<boolean> {
  return sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return [...new Set(error.errors.map((e) => (e instanceof Error ? e.message : String(e))))].join(', ');
  }
  if (error instanceof Error) return error.message || ((error as { code?: string }).code ?? error.name);
  return String(error);
}
