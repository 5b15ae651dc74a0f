import { type Kysely, sql } from 'kysely';
import type { Database, LinkRow, RigRow } from '../database.js';

/** One link with the totals of its sessions: a row of the fleet page. */
export interface LinkSummary {
  id: number;
  rig: string;
  name: string;
  protocol: string;
  settings: Record<string, unknown>;
  sessions: number;
  records: bigint;
  errors: bigint;
  gaps: bigint;
  lostBytes: bigint;
  /** Host time of the newest stored record of the link. */
  lastSeen: Date | null;
  /** The newest session (by start). */
  latestSession: string | null;
}

export async function listRigs(db: Kysely<Database>): Promise<RigRow[]> {
  return db.selectFrom('rigs').selectAll().orderBy('name').execute();
}

export async function getRig(db: Kysely<Database>, name: string): Promise<RigRow | undefined> {
  return db.selectFrom('rigs').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function getLinkById(db: Kysely<Database>, id: number): Promise<LinkRow | undefined> {
  return db.selectFrom('links').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every link (of one rig, or of the fleet) with its session totals, by rig and name. */
export async function linkSummaries(
  db: Kysely<Database>,
  filter: { rig?: string; id?: number } = {},
): Promise<LinkSummary[]> {
  let query = db
    .selectFrom('links as l')
    .leftJoin('sessions as s', (join) => join.onRef('s.rig', '=', 'l.rig').onRef('s.link', '=', 'l.name'))
    .select((eb) => [
      'l.id',
      'l.rig',
      'l.name',
      'l.protocol',
      'l.settings',
      eb.fn.count<string>('s.id').as('sessions'),
      sql<string>`coalesce(sum(s.record_count), 0)`.as('records'),
      sql<string>`coalesce(sum(s.error_count), 0)`.as('errors'),
      sql<string>`coalesce(sum(s.gap_count), 0)`.as('gaps'),
      sql<string>`coalesce(sum(s.lost_bytes), 0)`.as('lost_bytes'),
      eb.fn.max('s.last_host_time').as('last_seen'),
      sql<string | null>`(array_agg(s.id order by s.started_at desc, s.id desc) filter (where s.id is not null))[1]`.as(
        'latest_session',
      ),
    ])
    .groupBy('l.id')
    .orderBy('l.rig')
    .orderBy('l.name');
  if (filter.rig !== undefined) query = query.where('l.rig', '=', filter.rig);
  if (filter.id !== undefined) query = query.where('l.id', '=', filter.id);
  const rows = await query.execute();
  return rows.map((r) => ({
    id: r.id,
    rig: r.rig,
    name: r.name,
    protocol: r.protocol,
    settings: r.settings,
    sessions: Number(r.sessions),
    records: BigInt(r.records),
    errors: BigInt(r.errors),
    gaps: BigInt(r.gaps),
    lostBytes: BigInt(r.lost_bytes),
    lastSeen: r.last_seen ?? null,
    latestSession: r.latest_session ?? null,
  }));
}
