import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import { listPartitions } from './partitions.js';

/**
 * How `records.text` is indexed for substring search (trigram GIN, used by ILIKE '%...%'):
 * - `live`: every partition, kept up to date as rows arrive. Searches are fast on today's
 *   data too, but each row costs ~50 µs of index work at insert: the limit of ingest rate.
 * - `closed`: a day's partition is indexed once the day is over, in one build (cheaper per
 *   row, and off the insert path); today's rows are found through the other indexes.
 * - `off`: no text index.
 */
export type TextIndexMode = 'live' | 'closed' | 'off';
export const TEXT_INDEX_MODES: readonly TextIndexMode[] = ['live', 'closed', 'off'];

export interface EnsureTextIndexesOptions {
  mode: TextIndexMode;
  /** The current instant (tests pass their own); partitions of days before its day are closed. */
  now?: Date;
}

/**
 * Creates the missing text indexes the mode asks for, one per partition (built concurrently,
 * so inserts into that partition go on meanwhile). Returns the partitions it indexed. Without
 * the pg_trgm extension there is nothing to build, and it returns none.
 */
export async function ensureTextIndexes(db: Kysely<Database>, options: EnsureTextIndexesOptions): Promise<string[]> {
  if (options.mode === 'off') return [];
  const { rows: ext } = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(db);
  if (ext[0].n === 0) return [];
  const today = new Date(options.now ?? Date.now());
  const todayName = `records_p${today.toISOString().slice(0, 10).replaceAll('-', '')}`;
  const partitions = await listPartitions(db);
  const wanted = options.mode === 'live' ? [...partitions, 'records_default'] : partitions.filter((p) => p < todayName);
  const built: string[] = [];
  for (const partition of wanted) {
    const index = `${partition}_text_trgm`;
    const { rows } = await sql<{ valid: boolean }>`
      select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ${index}`.execute(
      db,
    );
    if (rows[0]?.valid) continue;
    // A concurrent build that was interrupted leaves an invalid index: drop it and build again.
    if (rows[0]) await sql`drop index concurrently if exists ${sql.table(index)}`.execute(db);
    await sql`create index concurrently if not exists ${sql.table(index)} on ${sql.table(partition)} using gin (text gin_trgm_ops)`.execute(
      db,
    );
    built.push(partition);
  }
  return built;
}
