import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import { type AlertRow, watchDb } from './watch-tables.js';

export interface AlertFiring {
  ruleId: string;
  rig: string;
  link: string;
  summary: string;
  /** The first matching record, when a record caused it. */
  session: string | null;
  seq: number | null;
  causeAt: Date;
}

/**
 * Stores a firing alert; undefined when the rule already fires on that link (another process
 * stored it first, or this one did before a restart): each firing is stored, and told, once;
 * undefined too when the rule is disabled or gone.
 */
export async function fireAlert(db: Kysely<Database>, alert: AlertFiring): Promise<AlertRow | undefined> {
  // Stored only while the rule is enabled: a process judging it from a copy it read before the
  // rule was disabled (a lease renewal away) stores nothing more once it is.
  return watchDb(db)
    .insertInto('alerts')
    .columns(['rule_id', 'rig', 'link', 'state', 'summary', 'session', 'seq', 'cause_at'])
    .expression((eb) =>
      eb
        .selectFrom('watch_rules')
        .select([
          'id as rule_id',
          eb.cast<string>(eb.val(alert.rig), 'text').as('rig'),
          eb.cast<string>(eb.val(alert.link), 'text').as('link'),
          eb.cast<'firing'>(eb.val('firing'), 'text').as('state'),
          eb.cast<string>(eb.val(alert.summary), 'text').as('summary'),
          eb.cast<string | null>(eb.val(alert.session), 'text').as('session'),
          eb.cast<string | null>(eb.val(alert.seq === null ? null : String(alert.seq)), 'bigint').as('seq'),
          eb.cast<Date>(eb.val(alert.causeAt), 'timestamptz').as('cause_at'),
        ])
        .where('id', '=', alert.ruleId)
        .where('enabled', '=', true),
    )
    .onConflict((oc) => oc.columns(['rule_id', 'rig', 'link']).where('state', '=', 'firing').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * Resolves every firing alert of a rule (it was disabled, or is about to be removed) and
 * returns them as resolved; an alert resolved already is not returned again.
 */
export async function resolveRuleAlerts(db: Kysely<Database>, ruleId: string): Promise<AlertRow[]> {
  return watchDb(db)
    .updateTable('alerts')
    .set({ state: 'resolved', resolved_at: sql<Date>`now()` })
    .where('rule_id', '=', ruleId)
    .where('state', '=', 'firing')
    .returningAll()
    .execute();
}

/** Resolves the rule's firing alert on a link; undefined when none fires (resolved already). */
export async function resolveAlert(
  db: Kysely<Database>,
  where: { ruleId: string; rig: string; link: string },
): Promise<AlertRow | undefined> {
  return watchDb(db)
    .updateTable('alerts')
    .set({ state: 'resolved', resolved_at: sql<Date>`now()` })
    .where('rule_id', '=', where.ruleId)
    .where('rig', '=', where.rig)
    .where('link', '=', where.link)
    .where('state', '=', 'firing')
    .returningAll()
    .executeTakeFirst();
}

/** Acknowledges an alert (who saw it); undefined when there is none of that id. */
export async function acknowledgeAlert(db: Kysely<Database>, id: number, by: string): Promise<AlertRow | undefined> {
  return watchDb(db)
    .updateTable('alerts')
    .set({ acknowledged_at: sql<Date>`coalesce(acknowledged_at, now())`, acknowledged_by: by })
    .where('id', '=', BigInt(id))
    .returningAll()
    .executeTakeFirst();
}

/** The alerts of a rule firing now (what a process taking the rule over goes on from). */
export async function firingAlertsOf(db: Kysely<Database>, ruleId: string): Promise<AlertRow[]> {
  return watchDb(db)
    .selectFrom('alerts')
    .selectAll()
    .where('rule_id', '=', ruleId)
    .where('state', '=', 'firing')
    .execute();
}

export interface AlertListFilter {
  id?: number;
  state?: 'firing' | 'resolved';
  rule?: string;
  rig?: string;
  link?: string;
  limit: number;
}

/** Alerts, newest first, with their rule's name. */
export async function listAlerts(
  db: Kysely<Database>,
  filter: AlertListFilter,
): Promise<(AlertRow & { rule_name: string })[]> {
  let query = watchDb(db)
    .selectFrom('alerts as a')
    .innerJoin('watch_rules as r', 'r.id', 'a.rule_id')
    .selectAll('a')
    .select('r.name as rule_name')
    .orderBy('a.fired_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(filter.limit);
  if (filter.id !== undefined) query = query.where('a.id', '=', BigInt(filter.id));
  if (filter.state) query = query.where('a.state', '=', filter.state);
  if (filter.rule) query = query.where('a.rule_id', '=', filter.rule);
  if (filter.rig) query = query.where('a.rig', '=', filter.rig);
  if (filter.link) query = query.where('a.link', '=', filter.link);
  return query.execute();
}

/** How many alerts fire per rule, rig and link (the Prometheus gauge). */
export async function firingAlertCounts(
  db: Kysely<Database>,
): Promise<{ rule: string; rig: string; link: string; n: number }[]> {
  const rows = await watchDb(db)
    .selectFrom('alerts as a')
    .innerJoin('watch_rules as r', 'r.id', 'a.rule_id')
    .select(['r.name as rule', 'a.rig', 'a.link', sql<number>`count(*)::int`.as('n')])
    .where('a.state', '=', 'firing')
    .groupBy(['r.name', 'a.rig', 'a.link'])
    .execute();
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}

/** Milliseconds since the epoch of a timestamptz column (null stays null). */
const epochMs = (column: string) => sql<number>`(extract(epoch from ${sql.ref(column)}) * 1000)::float8`;

/** The latest session of every link (open or ended): the link states that rules watch, times in ms. */
export async function latestLinkSessions(db: Kysely<Database>): Promise<
  {
    session: string;
    rig: string;
    link: string;
    protocol: string;
    startedMs: number;
    endedMs: number | null;
    lastRecordMs: number | null;
  }[]
> {
  return db
    .selectFrom('sessions')
    .select([
      'id as session',
      'rig',
      'link',
      'protocol',
      epochMs('started_at').as('startedMs'),
      epochMs('ended_at').as('endedMs'),
      epochMs('last_host_time').as('lastRecordMs'),
    ])
    .distinctOn(['rig', 'link'])
    .orderBy('rig')
    .orderBy('link')
    .orderBy('started_at', 'desc')
    .execute();
}

/** Records storage refused since `since` (on the database's clock), per session. */
export async function recordsRefusedSince(
  db: Kysely<Database>,
  since: Date,
): Promise<
  {
    session: string;
    rig: string;
    link: string;
    protocol: string;
    records: number;
    lost_at: Date;
    first_seq: bigint | null;
  }[]
> {
  const rows = await db
    .selectFrom('record_losses as l')
    .innerJoin('sessions as s', 's.id', 'l.session')
    .select(['l.session', 's.rig', 's.link', 's.protocol', 'l.records', 'l.lost_at', 'l.first_seq'])
    .where('l.lost_at', '>', since)
    .orderBy('l.lost_at')
    .execute();
  return rows;
}

/** The target build of every link's latest session that told one (started before `before`, when given). */
export async function latestTargetBuilds(db: Kysely<Database>, before?: Date): Promise<Map<string, string>> {
  let query = db
    .selectFrom('sessions')
    .select(['rig', 'link', sql<string | null>`target_info->>'build'`.as('build')])
    .distinctOn(['rig', 'link'])
    .where(sql<boolean>`target_info->>'build' is not null`)
    .orderBy('rig')
    .orderBy('link')
    .orderBy('started_at', 'desc');
  if (before) query = query.where('started_at', '<', before);
  const rows = await query.execute();
  return new Map(rows.flatMap((r) => (r.build ? [[`${r.rig}/${r.link}`, r.build] as const] : [])));
}
