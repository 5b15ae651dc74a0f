import { type ColumnType, type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';

/**
 * The tables whose rows are leased to one API process at a time (`owner` until `lease_until`,
 * oldest by `created_at` first): the Reporter endpoints and the watch rules.
 */
export type LeasedTable = 'reporter_endpoints' | 'watch_rules';

/** The columns every leased table has, which is all the lease queries touch. */
type LeaseColumns = {
  id: string;
  owner: ColumnType<string | null, never, string | null>;
  lease_until: ColumnType<Date | null, never, Date | null>;
  created_at: ColumnType<Date, never, never>;
};

/** The database seen as its leased tables only: one typed query serves each of them. */
const leasedDb = (db: Kysely<Database>) => db as unknown as Kysely<Record<LeasedTable, LeaseColumns>>;

/**
 * Takes up to `limit` rows of `table` nobody holds (never taken, given back, or whose lease
 * ran out) for `owner`, oldest first. Rows another process is taking at the same moment are
 * skipped, so two processes never take the same row. With `held` (the rows `owner` serves),
 * its own rows not among them are taken back too: it stopped serving them when it could not
 * renew in time, and need not wait for their leases to run out.
 */
export async function claimLeasedRows<Row>(
  db: Kysely<Database>,
  table: LeasedTable,
  owner: string,
  lease: { leaseMs: number; limit: number; held?: readonly string[] },
): Promise<Row[]> {
  if (lease.limit <= 0) return [];
  const { held } = lease;
  const rows = await leasedDb(db)
    .updateTable(table)
    .set({ owner, lease_until: sql<Date>`now() + ${lease.leaseMs} * interval '1 millisecond'` })
    .where('id', 'in', (eb) => {
      let free = eb
        .selectFrom(table)
        .select('id')
        .where((w) =>
          w.or([
            w('owner', 'is', null),
            w('lease_until', 'is', null),
            w('lease_until', '<', sql<Date>`now()`),
            ...(held === undefined ? [] : [w('owner', '=', owner)]),
          ]),
        );
      if (held?.length) free = free.where('id', 'not in', held);
      return free.orderBy('created_at').orderBy('id').limit(lease.limit).forUpdate().skipLocked();
    })
    .returningAll()
    .execute();
  return rows as Row[];
}

/** Gives back `owner`'s rows of `table` (it is stopping), so another process takes them at once. */
export async function releaseLeasedRows(db: Kysely<Database>, table: LeasedTable, owner: string): Promise<void> {
  await leasedDb(db).updateTable(table).set({ owner: null, lease_until: null }).where('owner', '=', owner).execute();
}
