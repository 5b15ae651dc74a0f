import zlib from 'node:zlib';
import { nodeZstd } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';

/*
 * The record block as migration 0007 writes it (block format v1), frozen: it reads the
 * `records` table of migration 0001 and writes `record_blocks` rows with its own SQL and its
 * own encoder, so that no later change of the live encoder (`blocks/record-block.ts`,
 * `writes/record-blocks.ts`, contracts' `summarizeRecords`) changes what 0007 writes.
 *
 * A v1 block's data is the JSON array of its records, as `JSON.stringify` writes the
 * TraceRecords of the time (keys in the order below; `qs` and `stp` only where the record
 * has them; `raw` base64), compressed with zstd at level 1 (codec 2), or raw deflate at level
 * 6 (codec 1) on a Node without zstd. Its summary columns are counted by Postgres from the
 * same rows.
 */

/** A block's records: one session's, in seq order. */
export interface RowsOfBlock {
  session: string;
  firstSeq: bigint;
  lastSeq: bigint;
  /** The records' JSON objects, in seq order. */
  records: object[];
}

/** A `records` row as the JSON object of its TraceRecord (v1), with its session and seq to walk by. */
export async function recordsJsonAfter(
  db: Kysely<unknown>,
  after: { session: string; seq: bigint },
  limit: number,
): Promise<Array<{ session: string; seq: bigint; record: object }>> {
  const { rows } = await sql<{ session: string; seq_text: string; record: string }>`
    select session, seq::text as seq_text, json_build_object(
      'rig', rig, 'link', link, 'session', session, 'seq', seq, 'chunk', chunk, 'protocol', protocol,
      'hostNs', host_ns::text, 'targetTs', target_ts::text, 'kind', kind, 'type', type, 'name', name,
      'fields', fields, 'text', text, 'raw', translate(encode(raw, 'base64'), chr(10), ''),
      'qs', case when coalesce(qs_obj, qs_sig, qs_prio::text) is not null
                 then json_strip_nulls(json_build_object('obj', qs_obj, 'sig', qs_sig, 'prio', qs_prio)) end,
      'stp', case when stp_master is not null and stp_channel is not null
                  then json_build_object('master', stp_master, 'channel', stp_channel) end)::text as record
    from records
    where (session, seq) > (${after.session}, ${after.seq.toString()}::bigint)
    order by session, seq limit ${limit}`.execute(db);
  return rows.map((row) => {
    const record = JSON.parse(row.record) as { qs?: unknown; stp?: unknown };
    if (record.qs === null) delete record.qs;
    if (record.stp === null) delete record.stp;
    return { session: row.session, seq: BigInt(row.seq_text), record };
  });
}

/** The state a QS record enters (QS_QEP_INIT_TRAN: its state, else its target; the TRAN records: their target). */
const STATE_ENTERED = `case
  when name = 'QS_QEP_INIT_TRAN' then coalesce(nullif(fields->'state', 'null'), fields->'target')
  when name in ('QS_QEP_TRAN', 'QS_QEP_TRAN_HIST', 'QS_QEP_TRAN_EP', 'QS_QEP_TRAN_XP') then fields->'target'
end #>> '{}'`;

/** Writes `block` as a v1 record block: its records' JSON compressed, its summary counted from its rows. */
export async function insertBlockV1(db: Kysely<unknown>, block: RowsOfBlock): Promise<void> {
  const json = Buffer.from(JSON.stringify(block.records));
  const [codec, data] = nodeZstd ? [2, nodeZstd.compress(json, 1)] : [1, zlib.deflateRawSync(json, { level: 6 })];
  // The distinct values of a column, in the order the block's records first hold them.
  const firstSeen = (column: string, where = `${column} is not null`) =>
    sql`array(select ${sql.raw(column)} from r where ${sql.raw(where)} group by 1 order by min(seq))`;
  await sql`
    with r as (
      select *, ${sql.raw(STATE_ENTERED)} as entered from records
      where session = ${block.session}
        and seq between ${block.firstSeq.toString()}::bigint and ${block.lastSeq.toString()}::bigint)
    insert into record_blocks (session, first_seq, last_seq, host_time, min_host_ns, max_host_ns, rig, link, protocol,
                               record_count, min_target_ts, max_target_ts, first_chunk, last_chunk, error_count,
                               gap_count, lost_bytes, names, kinds, types, objs, sigs, prios, channels, states,
                               codec, byte_count, data)
    select ${block.session}, min(seq), max(seq), timestamptz 'epoch' + (min(host_ns) / 1000) * interval '1 microsecond',
           min(host_ns), max(host_ns), min(rig), min(link), min(protocol),
           count(*), min(target_ts), max(target_ts), min(chunk), max(chunk), count(*) filter (where kind = 'error'),
           count(*) filter (where name = 'SEQ_GAP'),
           coalesce(sum((fields->>'lostBytes')::numeric)
                      filter (where kind = 'error' and jsonb_typeof(fields->'lostBytes') = 'number'), 0)::bigint,
           ${firstSeen('name')}, ${firstSeen('kind')}, ${firstSeen('type')}, ${firstSeen('qs_obj')},
           ${firstSeen('qs_sig')}, ${firstSeen('qs_prio')},
           ${firstSeen(`stp_master || '/' || stp_channel`, 'stp_master is not null and stp_channel is not null')},
           (select jsonb_object_agg(qs_obj, jsonb_build_object('seq', seq, 'hostNs', host_ns::text,
                                                               'targetTs', target_ts::text, 'state', entered))
            from (select distinct on (qs_obj) qs_obj, seq, host_ns, target_ts, entered from r
                  where qs_obj is not null and entered is not null order by qs_obj, seq desc) last_states),
           ${codec}, ${json.length}, ${data}
    from r`.execute(db);
}
