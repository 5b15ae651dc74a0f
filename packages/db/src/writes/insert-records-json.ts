import { RecordName } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import type { SessionCounts } from './sessions.js';

/** What one `insertRecordsJson` did to one session. */
export interface SessionBatchSummary {
  session: string;
  /** Counts of the records that were new (re-delivered ones are not counted again). */
  counts: SessionCounts & { records: number };
  /** Fields of the session's latest target-info record in the batch, if it had one. */
  targetInfo: Record<string, unknown> | null;
}

export interface InsertRecordsJsonResult {
  /** Records that were new. */
  inserted: number;
  /** One entry per session that had new records or target info, in session order. */
  sessions: SessionBatchSummary[];
}

interface SummaryRow {
  session: string;
  records: bigint | null;
  errors: bigint | null;
  gaps: bigint | null;
  lost_bytes: string | null;
  last_chunk: number | null;
  first_host_time: Date | null;
  last_host_time: Date | null;
  target_info: Record<string, unknown> | null;
}

/**
 * Inserts records given as one JSON array of `TraceRecord`s, exactly as they travel on the
 * bus, and returns what the sessions gained. Postgres reads the JSON itself
 * (`json_to_recordset`), so the writer never parses records nor builds a value per column:
 * at tens of thousands of records a second that work, and the garbage it leaves, cost more
 * than the insert.
 *
 * In the same statement, and so in the caller's transaction:
 * - records are inserted idempotently on (session, seq, host_time): a re-delivered record is
 *   skipped, and counted in nothing;
 * - dictionary records (kind `dict`) become dictionary entries, keyed by their fields other
 *   than `name` in their order (`obj=0x1000`), the latest of the batch winning;
 * - the counts of the new records are summed per session (records, errors, gaps, lost bytes,
 *   last chunk, host-time range) for the caller to add to its sessions, in an order of its
 *   choosing (row locks taken in one order by every writer cannot deadlock).
 *
 * `recordsJson` is sent as a binary parameter: the text of the JSON, never decoded in Node.
 * Bad JSON, or records without a required field, fail the statement with a data exception
 * (SQLSTATE class 22 or 23).
 */
export async function insertRecordsJson(
  db: Kysely<Database>,
  recordsJson: Uint8Array,
): Promise<InsertRecordsJsonResult> {
  const json = Buffer.isBuffer(recordsJson)
    ? recordsJson
    : Buffer.from(recordsJson.buffer, recordsJson.byteOffset, recordsJson.byteLength);
  const { rows } = await sql<SummaryRow>`
    with incoming as materialized (
      select *
      from json_to_recordset(${json}::json) as r(
        session text, seq bigint, "hostNs" bigint, rig text, link text, protocol text, chunk int, "targetTs" numeric,
        kind text, type int, name text, qs json, stp json, fields json, text text, raw text)
    ),
    inserted as (
      insert into records (session, seq, host_time, host_ns, rig, link, protocol, chunk, target_ts, kind, type, name,
                           qs_obj, qs_sig, qs_prio, stp_master, stp_channel, fields, text, raw)
      select session, seq, timestamptz 'epoch' + ("hostNs" / 1000) * interval '1 microsecond', "hostNs", rig, link,
             protocol, chunk, "targetTs", kind, type, name, qs->>'obj', qs->>'sig', (qs->>'prio')::int,
             (stp->>'master')::int, (stp->>'channel')::int, fields::jsonb, text, decode(raw, 'base64')
      from incoming
      on conflict do nothing
      returning session, kind, name, chunk, host_time, fields->'lostBytes' as lost_bytes
    ),
    dictionary_entries as (
      insert into dictionaries (session, kind, key, name)
      select distinct on (session, name, key) session, name, key, fields->>'name'
      from (
        select i.session, i.seq, i.name, i.fields,
               (select coalesce(string_agg(e.key || '=' || coalesce(e.value, 'null'), ',' order by e.n), '')
                from json_each_text(i.fields) with ordinality as e(key, value, n)
                where e.key <> 'name') as key
        from incoming i
        where i.kind = 'dict' and json_typeof(i.fields->'name') = 'string'
      ) as d
      order by session, name, key, seq desc
      on conflict (session, kind, key) do update set name = excluded.name
    ),
    target_info as (
      select distinct on (session) session, fields::jsonb as info
      from incoming
      where name = ${RecordName.QS_TARGET_INFO}
      order by session, seq desc
    ),
    counts as (
      select session,
             count(*) as records,
             count(*) filter (where kind = 'error') as errors,
             count(*) filter (where name = ${RecordName.SEQ_GAP}) as gaps,
             coalesce(sum(lost_bytes::numeric) filter (where kind = 'error' and jsonb_typeof(lost_bytes) = 'number'), 0)
               as lost_bytes,
             max(chunk) as last_chunk,
             min(host_time) as first_host_time,
             max(host_time) as last_host_time
      from inserted
      group by session
    )
    select coalesce(c.session, t.session) as session, c.records, c.errors, c.gaps, c.lost_bytes::text as lost_bytes,
           c.last_chunk, c.first_host_time, c.last_host_time, t.info as target_info
    from counts c full join target_info t on t.session = c.session
    order by 1`.execute(db);
  let inserted = 0;
  const sessions = rows.map((row): SessionBatchSummary => {
    const records = Number(row.records ?? 0n);
    inserted += records;
    return {
      session: row.session,
      counts: {
        records,
        errors: Number(row.errors ?? 0n),
        gaps: Number(row.gaps ?? 0n),
        lostBytes: Number(row.lost_bytes ?? 0),
        lastChunk: row.last_chunk ?? -1,
        firstHostTime: row.first_host_time ?? undefined,
        lastHostTime: row.last_host_time ?? undefined,
      },
      targetInfo: row.target_info,
    };
  });
  return { inserted, sessions };
}
