import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * Runs a read of several statements on one snapshot (a read-only repeatable-read
 * transaction), or on the caller's transaction when it is one. A reader that walks blocks
 * in rounds must: compaction replaces small blocks by a merged one between two rounds, and
 * without one snapshot a round could read the merged block after reading the blocks it
 * replaced (records twice) or skip past it (records never).
 */
export async function inOneSnapshot<T>(db: Kysely<Database>, read: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return read(db);
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}
