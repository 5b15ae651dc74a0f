import { type Kysely, type SqlBool, sql } from 'kysely';
import type { Database, SessionRow } from '../database.js';

export interface SessionFilter {
  rig?: string;
  link?: string;
  /** Sessions started at or after this instant... */
  from?: Date;
  /** ...and before this one. */
  to?: Date;
}

/** Where a sessions page continues: the last session of the previous page. */
export interface SessionPosition {
  /** `started_at` in µs since the epoch (exact, unlike a JS Date). */
  startedMicros: bigint;
  id: string;
}

/**
 * Sessions newest first (by start, then id), by keyset: `(started_at, id) < (cursor)`.
 * Reads one row more than asked to tell whether more follow.
 */
export async function sessionsPage(
  db: Kysely<Database>,
  filter: SessionFilter,
  opts: { limit: number; after?: SessionPosition },
): Promise<{ rows: SessionRow[]; hasMore: boolean; last?: SessionPosition }> {
  let query = db
    .selectFrom('sessions')
    .selectAll()
    .select(sql<string>`(extract(epoch from started_at) * 1000000)::bigint::text`.as('started_us'));
  if (filter.rig !== undefined) query = query.where('rig', '=', filter.rig);
  if (filter.link !== undefined) query = query.where('link', '=', filter.link);
  if (filter.from !== undefined) query = query.where('started_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('started_at', '<', filter.to);
  if (opts.after) {
    const { startedMicros, id } = opts.after;
    query = query.where(
      sql<SqlBool>`(started_at, id) < (timestamptz 'epoch' + ${startedMicros.toString()}::bigint * interval '1 microsecond', ${id})`,
    );
  }
  const rows = await query
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(opts.limit + 1)
    .execute();
  const hasMore = rows.length > opts.limit;
  if (hasMore) rows.pop();
  const tail = rows[rows.length - 1];
  const last = tail ? { startedMicros: BigInt(tail.started_us), id: tail.id } : undefined;
  return { rows: rows.map(({ started_us: _us, ...row }) => row), hasMore, last };
}

/** A session's dictionary entries (object, function, signal, user record names). */
export async function sessionDictionaries(
  db: Kysely<Database>,
  session: string,
): Promise<Array<{ kind: string; key: string; name: string }>> {
  return db
    .selectFrom('dictionaries')
    .select(['kind', 'key', 'name'])
    .where('session', '=', session)
    .orderBy('kind')
    .orderBy('key')
    .execute();
}
