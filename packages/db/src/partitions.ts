import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';

const DAY_MS = 86_400_000;
/** Key of the transaction-level advisory lock that serialises partition changes. */
const PARTITION_LOCK_KEY = 0x7061_7274; // "part"

export interface EnsurePartitionsOptions {
  /** First day (UTC) to cover; the partition of the day holding this instant. */
  from: Date;
  /** How many days after `from`'s day to cover as well. */
  daysAhead: number;
}

/**
 * The tables range-partitioned by host time into days (UTC): record blocks, and the link's bytes
 * (from migration 0005), by the host time of a block's first record or chunk. Each has a default partition for rows outside its days.
 */
export const PARTITIONED_TABLES = ['record_blocks', 'link_chunks'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Name of the daily partition of `table` that holds `day` (UTC): `record_blocks_p20250131`. */
export function partitionName(day: Date, table: PartitionedTable = 'record_blocks'): string {
  return `${table}_p${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/**
 * Makes the daily partitions of every partitioned table for `from`'s day and `daysAhead`
 * days after it (UTC days). Rows that already landed in a default partition for one of those
 * days are moved into the new partition. Safe to run from several processes at once.
 * Returns the names of the partitions it created.
 */
export async function ensurePartitions(db: Kysely<Database>, opts: EnsurePartitionsOptions): Promise<string[]> {
  const first = Math.floor(opts.from.getTime() / DAY_MS) * DAY_MS;
  const created: string[] = [];
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`.execute(trx);
    for (const table of await existingTables(trx)) {
      for (let i = 0; i <= opts.daysAhead; i++) {
        const start = new Date(first + i * DAY_MS);
        const end = new Date(first + (i + 1) * DAY_MS);
        if (await createDailyPartition(trx, table, start, end)) created.push(partitionName(start, table));
      }
    }
  });
  return created;
}

/** The partitioned tables the schema has (an older schema lacks the newer ones). */
async function existingTables(db: Kysely<Database>): Promise<PartitionedTable[]> {
  const found: PartitionedTable[] = [];
  for (const table of PARTITIONED_TABLES) {
    const { rows } = await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(db);
    if (rows[0]?.found) found.push(table);
  }
  return found;
}

async function createDailyPartition(
  trx: Kysely<Database>,
  table: PartitionedTable,
  start: Date,
  end: Date,
): Promise<boolean> {
  const name = partitionName(start, table);
  const { rows: existing } = await sql<{ found: string | null }>`select to_regclass(${name})::text as found`.execute(
    trx,
  );
  if (existing[0]?.found) return false;

  // DDL takes no bind parameters: the bounds are literals made from Dates by this function.
  const from = sql.lit(start.toISOString());
  const to = sql.lit(end.toISOString());
  const { rows: stray } = await sql<{ found: boolean }>`
    select exists (select 1 from ${sql.table(`${table}_default`)} where host_time >= ${start} and host_time < ${end}) as found`.execute(
    trx,
  );
  if (!stray[0]?.found) {
    await sql`create table ${sql.table(name)} partition of ${sql.table(table)} for values from (${from}) to (${to})`.execute(
      trx,
    );
    return true;
  }
  // Postgres refuses a new partition while the default one holds rows of its range: build the
  // table apart, move those rows into it, then attach it.
  await sql`create table ${sql.table(name)} (like ${sql.table(table)} including defaults including constraints including storage)`.execute(
    trx,
  );
  await sql`
    with moved as (
      delete from ${sql.table(`${table}_default`)} where host_time >= ${start} and host_time < ${end} returning *
    )
    insert into ${sql.table(name)} select * from moved`.execute(trx);
  await sql`alter table ${sql.table(table)} attach partition ${sql.table(name)} for values from (${from}) to (${to})`.execute(
    trx,
  );
  return true;
}

/** The daily partitions of `table` that exist, oldest first (the default partition excluded). */
export async function listPartitions(
  db: Kysely<Database>,
  table: PartitionedTable = 'record_blocks',
): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent
    where p.relname = ${table} and c.relname <> ${`${table}_default`}
    order by c.relname`.execute(db);
  return rows.map((r) => r.name);
}
