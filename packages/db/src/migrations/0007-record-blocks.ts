import type { TraceRecord } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import { decodeRecordBlock } from '../blocks/record-block.js';
import { createRecordsTable } from './0001-initial-schema.js';
import { insertBlockV1, type RowsOfBlock, recordsJsonAfter } from './0007-record-blocks-v1.js';

/**
 * Records move from one row each (`records`) into blocks (`record_blocks`): consecutive
 * records of a session, compressed, with a summary row that queries prune on. Records stored
 * by the earlier schema are converted, block by block, in this migration, as v1 blocks
 * (`0007-record-blocks-v1.ts`, frozen); `down` turns the blocks back into rows, whichever
 * format later writers gave them (it reads them as every reader does).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create sequence record_blocks_id_seq`.execute(db);
  await sql`
    create table record_blocks (
      id             bigint       not null default nextval('record_blocks_id_seq'),
      session        text         not null,
      first_seq      bigint       not null,
      last_seq       bigint       not null,
      host_time      timestamptz  not null,
      min_host_ns    bigint       not null,
      max_host_ns    bigint       not null,
      rig            text         not null,
      link           text         not null,
      protocol       text         not null,
      record_count   integer      not null,
      min_target_ts  numeric(20,0),
      max_target_ts  numeric(20,0),
      first_chunk    integer      not null,
      last_chunk     integer      not null,
      error_count    integer      not null,
      gap_count      integer      not null,
      lost_bytes     bigint       not null,
      names          text[]       not null,
      kinds          text[]       not null,
      types          integer[]    not null,
      objs           text[]       not null,
      sigs           text[]       not null,
      prios          integer[]    not null,
      channels       text[]       not null,
      states         jsonb,
      codec          smallint     not null,
      byte_count     integer      not null,
      data           bytea        not null,
      constraint record_blocks_pkey primary key (session, first_seq, host_time)
    ) partition by range (host_time)`.execute(db);
  // Compressed already: Postgres's own TOAST compression would only spend CPU on it.
  await sql`alter table record_blocks alter column data set storage external`.execute(db);
  await sql`create table record_blocks_default partition of record_blocks default`.execute(db);
  // Pages in time order across sessions walk these; a link's pages start from the first.
  await sql`create index record_blocks_rig_link_time_idx on record_blocks (rig, link, min_host_ns)`.execute(db);
  await sql`create index record_blocks_min_host_idx on record_blocks (min_host_ns, session, first_seq)`.execute(db);
  await sql`create index record_blocks_max_host_idx on record_blocks (max_host_ns, session, first_seq)`.execute(db);

  await convertRecordsToBlocks(db);
  await sql`drop table records`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await createRecordsTable(db);
  let after = { session: '', firstSeq: -1n };
  for (;;) {
    const { rows } = await sql<{
      session: string;
      rig: string;
      link: string;
      protocol: TraceRecord['protocol'];
      first_seq: string;
      codec: number;
      data: Buffer;
    }>`
      select b.session, b.rig, b.link, b.protocol, b.first_seq::text as first_seq, b.codec, b.data from record_blocks b
      where (b.session, b.first_seq) > (${after.session}, ${after.firstSeq.toString()}::bigint)
      order by b.session, b.first_seq limit 50`.execute(db);
    if (rows.length === 0) break;
    for (const row of rows) {
      const json = JSON.stringify(decodeRecordBlock(row.codec, row.data, row));
      await sql`
        insert into records (session, seq, host_time, host_ns, rig, link, protocol, chunk, target_ts, kind, type, name,
                             qs_obj, qs_sig, qs_prio, stp_master, stp_channel, fields, text, raw)
        select session, seq, timestamptz 'epoch' + ("hostNs" / 1000) * interval '1 microsecond', "hostNs", rig, link,
               protocol, chunk, "targetTs", kind, type, name, qs->>'obj', qs->>'sig', (qs->>'prio')::int,
               (stp->>'master')::int, (stp->>'channel')::int, fields::jsonb, text, decode(raw, 'base64')
        from json_to_recordset(${json}::json) as r(
          session text, seq bigint, "hostNs" bigint, rig text, link text, protocol text, chunk int, "targetTs" numeric,
          kind text, type int, name text, qs json, stp json, fields json, text text, raw text)
        on conflict do nothing`.execute(db);
    }
    const last = rows[rows.length - 1];
    after = { session: last.session, firstSeq: BigInt(last.first_seq) };
  }
  await sql`drop table record_blocks`.execute(db);
  await sql`drop sequence if exists record_blocks_id_seq`.execute(db);
}

/** Records per converted block: what storage's compaction aims at. */
const CONVERT_BLOCK_RECORDS = 2000;

/** Every stored record, session by session in seq order, into v1 blocks. */
async function convertRecordsToBlocks(db: Kysely<unknown>): Promise<void> {
  let after = { session: '', seq: -1n };
  let block: RowsOfBlock | undefined;
  for (;;) {
    const rows = await recordsJsonAfter(db, after, 10000);
    if (rows.length === 0) break;
    for (const { session, seq, record } of rows) {
      if (block && (block.session !== session || block.records.length >= CONVERT_BLOCK_RECORDS)) {
        await insertBlockV1(db, block);
        block = undefined;
      }
      block ??= { session, firstSeq: seq, lastSeq: seq, records: [] };
      block.lastSeq = seq;
      block.records.push(record);
    }
    after = rows[rows.length - 1];
  }
  if (block) await insertBlockV1(db, block);
}
