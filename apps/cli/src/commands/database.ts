import { redactUrl } from '@tracehub/contracts';
import type { createDb } from '@tracehub/db';

type Db = ReturnType<typeof createDb>;

/**
 * Runs `use` with a Postgres pool of the command's own (`tracehub-<command>` in
 * pg_stat_activity), closed once it is done. @tracehub/db is loaded here, not at start-up:
 * every other command would pay for the Postgres client.
 */
export async function withDatabase<T>(
  databaseUrl: string,
  command: string,
  use: (db: Db) => Promise<T>,
  maxConnections = 2,
): Promise<T> {
  const { createDb } = await import('@tracehub/db');
  const db = createDb(databaseUrl, { applicationName: `tracehub-${command}`, maxConnections });
  try {
    return await use(db);
  } finally {
    await db.destroy();
  }
}

/** What a command says when its first query fails: which Postgres (no password), and the setting to check. */
export function cannotQuery(databaseUrl: string, err: Error): Error {
  return new Error(`cannot query Postgres at ${redactUrl(databaseUrl)}: ${err.message}; check DATABASE_URL`);
}
