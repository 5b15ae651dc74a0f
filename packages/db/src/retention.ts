import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import { listPartitions, PARTITIONED_TABLES, type PartitionedTable, partitionName } from './partitions.js';

const DAY_MS = 86_400_000;
const PARTITION_LOCK_KEY = 0x7061_7274; // the lock ensurePartitions takes

export interface RetentionResult {
  /** Partitions dropped (of records and of link bytes). */
  dropped: string[];
  /** Sessions forgotten: every record and link byte of theirs was in dropped days. */
  sessions: number;
  /** Data of days before this instant is gone. */
  cutoff: Date;
}

/**
 * Applies a retention of `days` days: drops the daily partitions (records and link bytes) of
 * every day that ended more than `days` days before `now`, whole, never deleting rows from
 * them, then forgets the sessions that ended before the cutoff (their data went with the
 * partitions) and records what was applied for readers (`historyRange`). Rows a default
 * partition holds (hosts whose clock was far off) are not dropped.
 */
export async function applyRetention(db: Kysely<Database>, days: number, now = new Date()): Promise<RetentionResult> {
  if (!Number.isInteger(days) || days < 1)
    throw new RangeError(`retention must be a whole number of days >= 1, not ${days}`);
  const cutoff = new Date(Math.floor((now.getTime() - days * DAY_MS) / DAY_MS) * DAY_MS);
  const dropped: string[] = [];
  let sessions = 0;
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`.execute(trx);
    for (const table of PARTITIONED_TABLES) {
      const { rows } = await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(trx);
      if (!rows[0]?.found) continue;
      for (const name of await listPartitions(trx, table)) {
        if (name >= partitionName(cutoff, table as PartitionedTable)) continue;
        await sql`drop table ${sql.table(name)}`.execute(trx);
        dropped.push(name);
      }
    }
    const gone = await trx
      .deleteFrom('sessions')
      .where((eb) =>
        eb.or([
          eb('last_host_time', '<', cutoff),
          eb.and([eb('last_host_time', 'is', null), eb('started_at', '<', cutoff)]),
        ]),
      )
      .returning('id')
      .execute();
    sessions = gone.length;
    if (gone.length > 0) {
      await trx
        .deleteFrom('dictionaries')
        .where(
          'session',
          'in',
          gone.map((s) => s.id),
        )
        .execute();
    }
    await trx
      .insertInto('retention')
      .values({ days, cutoff, applied_at: now })
      .onConflict((oc) => oc.column('singleton').doUpdateSet({ days, cutoff, applied_at: now }))
      .execute();
  });
  return { dropped, sessions, cutoff };
}

export interface HistoryRange {
  /** The oldest stored record's host time bound: nothing older is kept (null: nothing stored). */
  from: Date | null;
  /** The newest stored record's host time (null: nothing stored). */
  to: Date | null;
  /** The retention applied, in days, and when (null: none; history is kept for ever). */
  retentionDays: number | null;
  retentionAppliedAt: Date | null;
}

/** How far back history goes: from the sessions' time spans, bounded by the retention cutoff. */
export async function historyRange(db: Kysely<Database>): Promise<HistoryRange> {
  const span = await db
    .selectFrom('sessions')
    .select((eb) => [eb.fn.min('first_host_time').as('from'), eb.fn.max('last_host_time').as('to')])
    .executeTakeFirst();
  const applied = await db.selectFrom('retention').selectAll().executeTakeFirst();
  let from = span?.from ?? null;
  if (from && applied && from < applied.cutoff) from = applied.cutoff;
  return {
    from,
    to: span?.to ?? null,
    retentionDays: applied?.days ?? null,
    retentionAppliedAt: applied?.applied_at ?? null,
  };
}
