import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';

/**
 * The tables whose rows are leased to one API process at a time (`owner` until `lease_until`,
 * oldest by `created_at` first): the Reporter endpoints and the watch rules.
 */
export type LeasedTable = 'reporter_endpoints' | 'watch_rules';

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
  const takeBack = held === undefined ? sql`false` : sql`owner = ${owner}`;
  const notHeld = held?.length ? sql`and id not in (${sql.join(held)})` : sql``;
  const result = await sql<Row>`
    update ${sql.table(table)} set owner = ${owner}, lease_until = now() + ${lease.leaseMs} * interval '1 millisecond'
    where id in (
      select id from ${sql.table(table)}
      where (owner is null or lease_until is null or lease_until < now() or ${takeBack}) ${notHeld}
      order by created_at, id
      limit ${lease.limit}
      for update skip locked
    )
    returning *`.execute(db);
  return result.rows;
}

/** Gives back `owner`'s rows of `table` (it is stopping), so another process takes them at once. */
export async function releaseLeasedRows(db: Kysely<Database>, table: LeasedTable, owner: string): Promise<void> {
  await sql`update ${sql.table(table)} set owner = null, lease_until = null where owner = ${owner}`.execute(db);
}
