import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import { claimLeasedRows, releaseLeasedRows } from '../writes/leased-rows.js';
import { type WatchRuleRow, watchDb } from './watch-tables.js';

/** A rule as readers show it: `evaluatedBy` is its owner while the lease runs, and its firing alerts. */
export interface SharedWatchRule extends WatchRuleRow {
  evaluatedBy: string | null;
  firing: number;
}

export interface NewWatchRule {
  id: string;
  name: string;
  scope: Record<string, unknown>;
  condition: Record<string, unknown>;
  webhooks: Record<string, unknown>[];
  enabled: boolean;
}

/** `ms` from now on the database's clock: every process compares leases with the same clock. */
const fromNow = (ms: number) => sql<Date>`now() + ${ms} * interval '1 millisecond'`;

/**
 * Adds a rule held by `owner` for `leaseMs` (it applies at once there), or unheld without a
 * lease (an API process takes it within a fifth of its lease); false when the id is taken.
 */
export async function insertWatchRule(
  db: Kysely<Database>,
  rule: NewWatchRule,
  lease?: { owner: string; leaseMs: number },
): Promise<boolean> {
  const row = await watchDb(db)
    .insertInto('watch_rules')
    .values({
      ...rule,
      webhooks: JSON.stringify(rule.webhooks),
      owner: lease?.owner ?? null,
      lease_until: lease ? fromNow(lease.leaseMs) : null,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Replaces a rule's definition (its owner picks it up at its next renewal); false when there is none. */
export async function updateWatchRule(db: Kysely<Database>, rule: NewWatchRule): Promise<boolean> {
  const { id, ...rest } = rule;
  const row = await watchDb(db)
    .updateTable('watch_rules')
    .set({ ...rest, webhooks: JSON.stringify(rule.webhooks) })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Disables a rule: from then on no process stores a firing of it (`fireAlert` asks); false when there is none. */
export async function disableWatchRule(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await watchDb(db)
    .updateTable('watch_rules')
    .set({ enabled: false })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes a rule and its alerts; false when there was none. */
export async function deleteWatchRule(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await watchDb(db).deleteFrom('watch_rules').where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** Silences a rule until `until` (null: no longer silenced); false when there is none. */
export async function silenceWatchRule(db: Kysely<Database>, id: string, until: Date | null): Promise<boolean> {
  const row = await watchDb(db)
    .updateTable('watch_rules')
    .set({ silenced_until: until })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Every rule (or the one named), oldest first. */
export async function listWatchRules(db: Kysely<Database>, id?: string): Promise<SharedWatchRule[]> {
  let query = watchDb(db)
    .selectFrom('watch_rules as r')
    .selectAll('r')
    .select(sql<string | null>`case when r.lease_until > now() then r.owner end`.as('evaluatedBy'))
    .select((eb) =>
      eb
        .selectFrom('alerts as a')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('a.rule_id', '=', 'r.id')
        .where('a.state', '=', 'firing')
        .as('firing'),
    )
    .orderBy('r.created_at')
    .orderBy('r.id');
  if (id !== undefined) query = query.where('r.id', '=', id);
  const rows = await query.execute();
  return rows.map((r) => ({ ...r, firing: Number(r.firing ?? 0) }));
}

/**
 * Renews `owner`'s leases on `ids` and returns the rows still its own, as stored now (a rule
 * missing was removed, or taken by another process after the lease ran out).
 */
export async function renewWatchRuleLeases(
  db: Kysely<Database>,
  owner: string,
  leaseMs: number,
  ids: readonly string[],
): Promise<WatchRuleRow[]> {
  if (ids.length === 0) return [];
  return watchDb(db)
    .updateTable('watch_rules')
    .set({ lease_until: fromNow(leaseMs) })
    .where('owner', '=', owner)
    .where('id', 'in', ids)
    .returningAll()
    .execute();
}

/**
 * Takes up to `limit` rules nobody judges for `owner` (see `claimLeasedRows`), and its own
 * rules it no longer judges (not in `judged`).
 */
export async function claimWatchRules(
  db: Kysely<Database>,
  owner: string,
  leaseMs: number,
  limit: number,
  judged: readonly string[] = [],
): Promise<WatchRuleRow[]> {
  return claimLeasedRows<WatchRuleRow>(db, 'watch_rules', owner, { leaseMs, limit, held: judged });
}

/** Gives back `owner`'s rules (it is stopping), so another process takes them at once. */
export async function releaseWatchRules(db: Kysely<Database>, owner: string): Promise<void> {
  await releaseLeasedRows(db, 'watch_rules', owner);
}

/** How many rules there are (to share them out over the processes alive). */
export async function countWatchRules(db: Kysely<Database>): Promise<number> {
  const row = await watchDb(db)
    .selectFrom('watch_rules')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
