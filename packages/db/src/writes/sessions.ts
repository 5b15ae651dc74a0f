import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';

export interface SessionInput {
  id: string;
  rig: string;
  link: string;
  protocol: string;
  startedAt: Date;
  /** Target info / configuration, when the decoder has seen it. */
  targetInfo?: Record<string, unknown> | null;
}

/**
 * Creates a session, or on a second call (re-delivery, restart) keeps the first one and only
 * fills in target info that was missing.
 */
export async function upsertSession(db: Kysely<Database>, session: SessionInput): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      id: session.id,
      rig: session.rig,
      link: session.link,
      protocol: session.protocol,
      started_at: session.startedAt,
      target_info: session.targetInfo ?? null,
    })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({ target_info: sql`coalesce(excluded.target_info, sessions.target_info)` }),
    )
    .execute();
}

/**
 * Locks the rows of `ids` for the caller's transaction, in id order. A writer that updates
 * several sessions takes them all here first, so that two writers (two storages, or the
 * record and link-bytes writers of one) never each hold a row the other waits for.
 */
export async function lockSessions(trx: Kysely<Database>, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await trx.selectFrom('sessions').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/** Marks a session ended (its end-of-session chunk arrived). */
export async function markSessionEnded(
  db: Kysely<Database>,
  sessionId: string,
  endedAt: Date,
  lastChunk: number,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ ended_at: endedAt, last_chunk: sql`greatest(last_chunk, ${lastChunk})` })
    .where('id', '=', sessionId)
    .execute();
}

export interface SessionCounts {
  records?: number;
  errors?: number;
  gaps?: number;
  lostBytes?: number;
  /** Highest chunk seen so far; the stored value only grows. */
  lastChunk?: number;
  /** Host time of the earliest and latest record of the batch; the stored range only widens. */
  firstHostTime?: Date;
  lastHostTime?: Date;
}

/**
 * Adds a batch's counts to a session. Counts are additive: call it once per committed batch,
 * with what the insert reported as new, so re-deliveries are not counted twice.
 */
export async function addSessionCounts(db: Kysely<Database>, sessionId: string, counts: SessionCounts): Promise<void> {
  await addSessionCountsMany(db, [{ session: sessionId, counts }]);
}

/** Records how many records the session has in all (from its end-of-session batch). */
export async function setSessionRecordTotal(db: Kysely<Database>, sessionId: string, total: number): Promise<void> {
  await db.updateTable('sessions').set({ record_total: total }).where('id', '=', sessionId).execute();
}

/**
 * `addSessionCounts` for many sessions in one statement (a storage batch touches one row per
 * session it carries records of).
 */
export async function addSessionCountsMany(
  db: Kysely<Database>,
  rows: ReadonlyArray<{ session: string; counts: SessionCounts }>,
): Promise<void> {
  if (rows.length === 0) return;
  const column = <T>(pick: (c: SessionCounts) => T) => rows.map((r) => pick(r.counts));
  const ids = rows.map((r) => r.session);
  const records = column((c) => String(c.records ?? 0));
  const errors = column((c) => String(c.errors ?? 0));
  const gaps = column((c) => String(c.gaps ?? 0));
  const lost = column((c) => String(c.lostBytes ?? 0));
  const lastChunks = column((c) => c.lastChunk ?? -1);
  const firsts = column((c) => c.firstHostTime?.toISOString() ?? null);
  const lasts = column((c) => c.lastHostTime?.toISOString() ?? null);
  await sql`
    update sessions as s set
      record_count = s.record_count + v.records,
      error_count = s.error_count + v.errors,
      gap_count = s.gap_count + v.gaps,
      lost_bytes = s.lost_bytes + v.lost,
      last_chunk = greatest(s.last_chunk, v.last_chunk),
      first_host_time = least(s.first_host_time, v.first_host_time),
      last_host_time = greatest(s.last_host_time, v.last_host_time)
    from unnest(${ids}::text[], ${records}::bigint[], ${errors}::bigint[], ${gaps}::bigint[], ${lost}::bigint[],
      ${lastChunks}::int[], ${firsts}::timestamptz[], ${lasts}::timestamptz[])
      as v(id, records, errors, gaps, lost, last_chunk, first_host_time, last_host_time)
    where s.id = v.id`.execute(db);
}
