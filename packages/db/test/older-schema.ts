import { type Kysely, Migrator } from 'kysely';
import { migrations, recordToRow } from '../src/index.js';

/** Migrations up to (and with) `last`, as Kysely's migrator takes them. */
const upTo = (last: string) => ({
  getMigrations: async () => Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last)),
});

/** Brings the schema up to migration `last` and no further: the schema an older version ran on. */
export async function migrateTo(db: Kysely<unknown>, last: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: upTo(last) }).migrateToLatest();
  if (error) throw error;
}

/** A record as a row of the 0001 `records` table, which had no target time (it came later, in the records' JSON). */
export type Row0001 = Omit<ReturnType<typeof recordToRow>, 'target_time' | 'target_segment'>;
export function row0001(r: Parameters<typeof recordToRow>[0]): Row0001 {
  const { target_time: _time, target_segment: _segment, ...row } = recordToRow(r);
  return row;
}
