import type { TraceRecord } from '@tracehub/contracts';
import type { Kysely, Selectable } from 'kysely';
import type { Database, RecordsTable, SessionRow } from '../database.js';

export type RecordRow = Selectable<RecordsTable>;

/** The newest session of a link (by start time), if it has any. */
export async function latestSession(db: Kysely<Database>, rig: string, link: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('rig', '=', rig)
    .where('link', '=', link)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function getSession(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** True when the session's end was stored and every one of its records with it. */
export function isSessionComplete(session: SessionRow): boolean {
  return session.ended_at !== null && session.record_total !== null && session.record_count === session.record_total;
}

/** A page of a session's records in seq order, after `afterSeq` (keyset pagination). */
export async function sessionRecordsPage(
  db: Kysely<Database>,
  session: string,
  afterSeq: bigint | number,
  limit: number,
): Promise<RecordRow[]> {
  return db
    .selectFrom('records')
    .selectAll()
    .where('session', '=', session)
    .where('seq', '>', BigInt(afterSeq))
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** Every record of a session in seq order (after `afterSeq`), a page at a time, without holding the whole session. */
export async function* sessionRecords(
  db: Kysely<Database>,
  session: string,
  pageSize = 5000,
  afterSeq: bigint = -1n,
): AsyncGenerator<RecordRow> {
  let after = afterSeq;
  for (;;) {
    const page = await sessionRecordsPage(db, session, after, pageSize);
    for (const row of page) yield row;
    if (page.length < pageSize) return;
    after = page[page.length - 1].seq;
  }
}

/** A stored row as the TraceRecord it was. */
export function rowToTraceRecord(row: RecordRow): TraceRecord {
  const record: TraceRecord = {
    rig: row.rig,
    link: row.link,
    session: row.session,
    seq: Number(row.seq),
    chunk: row.chunk,
    protocol: row.protocol as TraceRecord['protocol'],
    hostNs: row.host_ns.toString(),
    targetTs: row.target_ts,
    kind: row.kind as TraceRecord['kind'],
    type: row.type,
    name: row.name,
    fields: row.fields,
    text: row.text,
    raw: Buffer.from(row.raw).toString('base64'),
  };
  const qs: NonNullable<TraceRecord['qs']> = {};
  if (row.qs_obj !== null) qs.obj = row.qs_obj;
  if (row.qs_sig !== null) qs.sig = row.qs_sig;
  if (row.qs_prio !== null) qs.prio = row.qs_prio;
  if (Object.keys(qs).length > 0) record.qs = qs;
  if (row.stp_master !== null && row.stp_channel !== null)
    record.stp = { master: row.stp_master, channel: row.stp_channel };
  return record;
}
