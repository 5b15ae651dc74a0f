import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';

/**
 * Since when this database keeps link bytes: when the migration that made `link_chunks` ran
 * (undefined before it has). A session that started earlier has none, and never will; one that
 * started later and has none yet is still being stored.
 */
export async function linkBytesKeptSince(db: Kysely<Database>): Promise<Date | undefined> {
  const { rows } = await sql<{ timestamp: string | Date }>`
    select timestamp from kysely_migration where name = '0005-link-chunks'`.execute(db);
  return rows[0] === undefined ? undefined : new Date(rows[0].timestamp);
}
