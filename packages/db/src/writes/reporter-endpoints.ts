import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, ReporterEndpointsTable } from '../database.js';
import { claimLeasedRows, releaseLeasedRows } from './leased-rows.js';

export type ReporterEndpointRow = Selectable<ReporterEndpointsTable>;

/** A row as readers show it: `servedBy` is the owner while its lease runs, else null. */
export interface SharedReporterEndpoint extends ReporterEndpointRow {
  servedBy: string | null;
}

/** `ms` from now on the database's clock: every process compares leases with the same clock. */
const fromNow = (ms: number) => sql<Date>`now() + ${ms} * interval '1 millisecond'`;

/** Adds an endpoint, held by `owner` for `leaseMs`; false when an endpoint of that id exists. */
export async function insertReporterEndpoint(
  db: Kysely<Database>,
  endpoint: { id: string; source: 'config' | 'api'; config: Record<string, unknown>; owner: string; leaseMs: number },
): Promise<boolean> {
  const row = await db
    .insertInto('reporter_endpoints')
    .values({
      id: endpoint.id,
      source: endpoint.source,
      config: endpoint.config,
      owner: endpoint.owner,
      lease_until: fromNow(endpoint.leaseMs),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Adds the endpoints a process's configuration names (unleased: whoever has room takes them),
 * and makes those already added from configuration what the configuration says now. An
 * endpoint of the same id added through the API is left as it is.
 */
export async function upsertConfiguredReporterEndpoints(
  db: Kysely<Database>,
  endpoints: ReadonlyArray<{ id: string; config: Record<string, unknown> }>,
): Promise<void> {
  if (endpoints.length === 0) return;
  await db
    .insertInto('reporter_endpoints')
    .values(endpoints.map((e) => ({ id: e.id, source: 'config' as const, config: e.config })))
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({ config: (eb) => eb.ref('excluded.config') })
        .where('reporter_endpoints.source', '=', 'config'),
    )
    .execute();
}

/** Removes an endpoint; false when there was none. Its owner stops serving it at its next renewal. */
export async function deleteReporterEndpoint(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await db.deleteFrom('reporter_endpoints').where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** Every endpoint (or the one named), oldest first. */
export async function listReporterEndpoints(db: Kysely<Database>, id?: string): Promise<SharedReporterEndpoint[]> {
  let query = db
    .selectFrom('reporter_endpoints')
    .selectAll()
    .select(sql<string | null>`case when lease_until > now() then owner end`.as('servedBy'))
    .orderBy('created_at')
    .orderBy('id');
  if (id !== undefined) query = query.where('id', '=', id);
  return query.execute();
}

/**
 * Renews `owner`'s leases on `statuses`' endpoints and stores their statuses (one statement).
 * Returns the ids still its own: an endpoint missing was removed, or taken by another process
 * after the lease ran out, and must no longer be served here.
 */
export async function renewReporterLeases(
  db: Kysely<Database>,
  owner: string,
  leaseMs: number,
  statuses: Readonly<Record<string, Record<string, unknown>>>,
): Promise<string[]> {
  const ids = Object.keys(statuses);
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('reporter_endpoints')
    .set({
      lease_until: fromNow(leaseMs),
      status: sql`${JSON.stringify(statuses)}::jsonb -> id`,
      status_at: sql`now()`,
    })
    .where('owner', '=', owner)
    .where('id', 'in', ids)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Takes up to `limit` endpoints nobody serves (never taken, given back, or whose lease ran
 * out) for `owner`, oldest first; two processes never take the same endpoint.
 */
export async function claimReporterEndpoints(
  db: Kysely<Database>,
  owner: string,
  leaseMs: number,
  limit: number,
): Promise<ReporterEndpointRow[]> {
  return claimLeasedRows<ReporterEndpointRow>(db, 'reporter_endpoints', owner, { leaseMs, limit });
}

/** Gives back `owner`'s endpoints (it is stopping), so another process takes them at once. */
export async function releaseReporterEndpoints(db: Kysely<Database>, owner: string): Promise<void> {
  await releaseLeasedRows(db, 'reporter_endpoints', owner);
}

/**
 * Keeps API process `id` counted as alive for `ttlMs` and forgets processes gone for an hour.
 * Returns how many are alive (this one included) and how many endpoints there are.
 */
export async function heartbeatApiReplica(
  db: Kysely<Database>,
  id: string,
  ttlMs: number,
): Promise<{ replicas: number; endpoints: number }> {
  await db
    .insertInto('api_replicas')
    .values({ id, seen_until: fromNow(ttlMs) })
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_until: (eb) => eb.ref('excluded.seen_until') }))
    .execute();
  await db.deleteFrom('api_replicas').where('seen_until', '<', sql<Date>`now() - interval '1 hour'`).execute();
  const counts = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom('api_replicas')
        .select((c) => c.fn.countAll<string>().as('n'))
        .where('seen_until', '>', sql<Date>`now()`)
        .as('replicas'),
      eb
        .selectFrom('reporter_endpoints')
        .select((c) => c.fn.countAll<string>().as('n'))
        .as('endpoints'),
    ])
    .executeTakeFirstOrThrow();
  return { replicas: Math.max(1, Number(counts.replicas)), endpoints: Number(counts.endpoints) };
}

/** Forgets API process `id` (it stopped). */
export async function removeApiReplica(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('api_replicas').where('id', '=', id).execute();
}
