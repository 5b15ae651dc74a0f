import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  ensurePartitions,
  insertRecords,
  insertRecordsJson,
  listPartitions,
  sessionRecordsPage,
} from '../src/index.js';
import { qsRecord, stpRecord } from './records-fixture.js';
import { migratedDatabaseForFile } from './test-database.js';

const db = migratedDatabaseForFile('dbrec');

/** Which table the block holding a stored record physically sits in. */
async function partitionOf(session: string, seq: number): Promise<string> {
  const { rows } = await sql<{ part: string }>`
    select tableoid::regclass::text as part from record_blocks
    where session = ${session} and first_seq <= ${seq} and last_seq >= ${seq}`.execute(db);
  return rows[0]?.part;
}

/** Every stored record of a session, in seq order. */
const rowsOfSession = (session: string) => sessionRecordsPage(db, session, -1, 1_000_000);

const nowNs = () => (BigInt(Date.now()) * 1_000_000n + 123_456n).toString();

describe('insertRecords', () => {
  it('stores a record inserted twice once', async () => {
    const record = qsRecord(0, nowNs(), 'dup');
    expect(await insertRecords(db, [record])).toBe(1);
    expect(await insertRecords(db, [record])).toBe(0);
    // Re-delivered inside a bigger batch: only the new record counts.
    expect(await insertRecords(db, [record, qsRecord(1, nowNs(), 'dup')])).toBe(2 - 1);
    expect((await rowsOfSession('dup')).map((r) => r.seq)).toEqual([0n, 1n]);
  });

  it('round-trips every column', async () => {
    const hostNs = '1764000000123456789'; // 2025-11-24T16:00:00.123456789Z
    const qs = qsRecord(5, hostNs, 'rt');
    const stp = stpRecord(6, hostNs, 'rt');
    expect(await insertRecords(db, [qs, stp])).toBe(2);
    const rows = await rowsOfSession('rt');
    // The block is partitioned by its earliest record's host time, kept to the µs.
    const block = await db
      .selectFrom('record_blocks')
      .select(sql<string>`to_char(host_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`.as('host_time_text'))
      .where('session', '=', 'rt')
      .executeTakeFirstOrThrow();
    expect(block.host_time_text).toBe('2025-11-24T16:00:00.123456');
    expect(rows).toHaveLength(2);
    const [a, b] = rows;
    expect(a).toMatchObject({
      session: 'rt',
      seq: 5n,
      host_ns: 1764000000123456789n,
      rig: 'rig7',
      link: 'uart0',
      protocol: 'qs',
      chunk: 1,
      target_ts: '18446744073709551615',
      kind: 'record',
      type: 1,
      name: 'QS_QEP_STATE_ENTRY',
      qs_obj: 'l_blinky',
      qs_sig: 'TIMEOUT_SIG',
      qs_prio: 3,
      stp_master: null,
      stp_channel: null,
      fields: qs.fields,
      text: qs.text,
    });
    expect(a.host_time.toISOString()).toBe('2025-11-24T16:00:00.123Z');
    expect(Buffer.from(a.raw).toString('base64')).toBe(qs.raw);
    expect(b).toMatchObject({
      seq: 6n,
      target_ts: null,
      kind: 'error',
      qs_obj: null,
      qs_sig: null,
      qs_prio: null,
      stp_master: 0xffff,
      stp_channel: 12,
      fields: {},
      text: 'gap: 3 bytes skipped\nsecond line ü',
    });
    expect(b.raw.length).toBe(0);
  });

  it('writes 10 000 records in one statement', async () => {
    const base = BigInt(Date.now()) * 1_000_000n;
    const batch = Array.from({ length: 10_000 }, (_, i) => qsRecord(i, (base + BigInt(i) * 1000n).toString(), 'big'));
    expect(await insertRecords(db, batch)).toBe(10_000);
    expect(await insertRecords(db, batch)).toBe(0);
  });
});

describe('insertRecordsJson', () => {
  const json = (records: unknown[]) => Buffer.from(JSON.stringify(records));

  it('stores records given as JSON bytes as it stores record objects, and counts only new records', async () => {
    const hostNs = '1764000000123456789';
    const qs = qsRecord(5, hostNs, 'js');
    const stp = stpRecord(6, hostNs, 'js');
    const first = await insertRecordsJson(db, json([qs, stp]));
    expect(first.inserted).toBe(2);
    expect(first.sessions).toEqual([
      {
        session: 'js',
        counts: {
          records: 2,
          errors: 1,
          gaps: 1,
          lostBytes: 0,
          lastChunk: 6,
          firstHostTime: new Date('2025-11-24T16:00:00.123Z'),
          lastHostTime: new Date('2025-11-24T16:00:00.123Z'),
        },
        targetInfo: null,
      },
    ]);
    // The same rows as the parameter-per-column insert.
    await insertRecords(db, [
      { ...qs, session: 'js-ref' },
      { ...stp, session: 'js-ref' },
    ]);
    const rowsOf = async (session: string) =>
      (await rowsOfSession(session)).map(({ session: _session, ...columns }) => columns);
    expect(await rowsOf('js')).toEqual(await rowsOf('js-ref'));

    // Re-delivered with new records: only the new ones count.
    const lost = {
      ...stpRecord(7, hostNs, 'js'),
      kind: 'error' as const,
      name: 'LINK_LOST',
      fields: { lostBytes: 40 },
    };
    const again = await insertRecordsJson(db, json([qs, stp, lost]));
    expect(again.inserted).toBe(1);
    expect(again.sessions[0].counts).toMatchObject({ records: 1, errors: 1, gaps: 0, lostBytes: 40, lastChunk: 7 });
  });

  it('turns dictionary records into entries and reports target info, per session', async () => {
    const hostNs = nowNs();
    const dict = (seq: number, session: string, fields: Record<string, unknown>) => ({
      ...qsRecord(seq, hostNs, session),
      kind: 'dict',
      name: 'QS_SIG_DICT',
      fields,
    });
    const info = (seq: number, session: string, fields: Record<string, unknown>) => ({
      ...qsRecord(seq, hostNs, session),
      kind: 'info',
      name: 'QS_TARGET_INFO',
      fields,
    });
    const result = await insertRecordsJson(
      db,
      json([
        info(0, 'dict-b', { objPtrSize: 4 }),
        info(1, 'dict-b', { objPtrSize: 8 }),
        dict(2, 'dict-b', { sig: 4, obj: '0x20', name: 'OLD' }),
        dict(3, 'dict-b', { sig: 4, obj: '0x20', name: 'EAT_SIG' }),
        dict(0, 'dict-a', { obj: '0x10', name: 'l_table', extra: null }),
      ]),
    );
    expect(result.sessions.map((s) => [s.session, s.counts.records, s.targetInfo])).toEqual([
      ['dict-a', 1, null],
      ['dict-b', 4, { objPtrSize: 8 }],
    ]);
    const entries = await db
      .selectFrom('dictionaries')
      .select(['session', 'kind', 'key', 'name'])
      .where('session', 'in', ['dict-a', 'dict-b'])
      .orderBy('session')
      .execute();
    expect(entries).toEqual([
      { session: 'dict-a', kind: 'QS_SIG_DICT', key: 'obj=0x10,extra=null', name: 'l_table' },
      { session: 'dict-b', kind: 'QS_SIG_DICT', key: 'sig=4,obj=0x20', name: 'EAT_SIG' },
    ]);
  });

  it('refuses bad JSON and records without required fields as data', async () => {
    await expect(insertRecordsJson(db, Buffer.from('[{"seq":'))).rejects.toMatchObject({ code: '22P02' });
    const { fields: _fields, ...noFields } = qsRecord(0, nowNs(), 'bad');
    await expect(insertRecordsJson(db, json([noFields]))).rejects.toMatchObject({ code: '23502' });
  });
});

describe('partitions', () => {
  it('are made ahead, and a record far in the past or future still lands', async () => {
    const parts = await listPartitions(db);
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    const inAWeek = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
    expect(parts).toContain(`record_blocks_p${today}`);
    expect(parts).toContain(`record_blocks_p${inAWeek}`);

    const past = qsRecord(0, '978307200000000000', 'far'); // 2001-01-01
    const future = qsRecord(1, '4102444800000000000', 'far'); // 2100-01-01
    const recent = qsRecord(2, nowNs(), 'far');
    expect(await insertRecords(db, [past, future, recent])).toBe(3);
    expect(await partitionOf('far', 0)).toBe('record_blocks_default');
    expect(await partitionOf('far', 1)).toBe('record_blocks_default');
    expect(await partitionOf('far', 2)).toBe(`record_blocks_p${today}`);
  });

  it('take over the rows the default partition holds for their day', async () => {
    const stray = qsRecord(0, '1000000000000000000', 'stray'); // 2001-09-09T01:46:40Z
    await insertRecords(db, [stray]);
    expect(await partitionOf('stray', 0)).toBe('record_blocks_default');
    const created = await ensurePartitions(db, { from: new Date('2001-09-08T12:00:00Z'), daysAhead: 2 });
    expect(created).toEqual([
      'record_blocks_p20010908',
      'record_blocks_p20010909',
      'record_blocks_p20010910',
      'link_chunks_p20010908',
      'link_chunks_p20010909',
      'link_chunks_p20010910',
    ]);
    expect(await partitionOf('stray', 0)).toBe('record_blocks_p20010909');
    expect(await ensurePartitions(db, { from: new Date('2001-09-08T12:00:00Z'), daysAhead: 2 })).toEqual([]);
    // Still one copy, and still idempotent across the move.
    expect(await insertRecords(db, [stray])).toBe(0);
  });
});
