import zlib from 'node:zlib';
import { digestRecords, mergeDigests, type RecordsDigest, stateOf, type TraceRecord } from '@tracehub/contracts';
import { freshDatabase } from '@tracehub/tests/support';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  createDb,
  type Database,
  forEachSessionDigest,
  getLinkSettings,
  historyRange,
  insertRecords,
  isSessionLinkComplete,
  linkSettingsChanges,
  linkSummaries,
  migrateToLatest,
  recordsPage,
  rowToTraceRecord,
  ScanBudget,
  sessionDictionaries,
  sessionLinkChunks,
  sessionLinkLosses,
  sessionRecords,
  sessionStateMachines,
  sessionsPage,
} from '../src/index.js';
import { migrateTo, type Row0001, row0001 } from './older-schema.js';

// A database as the first versions filled it, upgraded through every later migration, read
// back through today's queries. Each table is filled with plain SQL in the columns its
// migration made, at the migration that made it, as the version of that time wrote it.

const T0 = 1_764_000_000_000_000_000n;
const MS = 1_000_000n;
const hostDate = (ns: bigint) => new Date(Number(ns / MS));

/** The philosopher's states in turn: each QS_QEP_TRAN leaves one for the next. */
const STATES = ['thinking', 'hungry', 'eating'];
/** Records of the QS session: more than the 2 000 that 0007 puts in one block, so it makes two. */
const QS_COUNT = 2100;

function qsRecord(seq: number): TraceRecord {
  const base = {
    rig: 'rig1',
    link: 'uart0',
    session: 's-qs',
    seq,
    chunk: Math.floor(seq / 700),
    protocol: 'qs' as const,
    hostNs: (T0 + BigInt(seq) * MS).toString(),
    targetTs: String(seq * 10),
    kind: 'record' as const,
    raw: Buffer.from([seq & 0xff, 0x7e]).toString('base64'),
  };
  if (seq === 0)
    return {
      ...base,
      type: 2,
      name: 'QS_QEP_INIT_TRAN',
      qs: { obj: 'l_philo' },
      fields: { state: null, target: 'thinking' },
      text: 'Init l_philo thinking',
    };
  if (seq % 100 === 50) {
    const n = (seq - 50) / 100;
    const [source, target] = [STATES[n % 3], STATES[(n + 1) % 3]];
    return {
      ...base,
      type: 9,
      name: 'QS_QEP_TRAN',
      qs: { obj: 'l_philo', sig: 'TIMEOUT_SIG', prio: 3 },
      fields: { sig: 'TIMEOUT_SIG', source, target },
      text: `Tran l_philo ${source}->${target}`,
    };
  }
  if (seq === 777)
    return { ...base, kind: 'error', type: 70, name: 'QS_ERROR', fields: { lostBytes: 5 }, text: 'lost 5 bytes' };
  return {
    ...base,
    type: 100,
    name: 'PHILO_STAT',
    qs: { obj: 'l_table' },
    fields: { philo: seq % 5 },
    text: `PHILO_STAT #${seq}`,
  };
}

const QS_RECORDS = Array.from({ length: QS_COUNT }, (_, seq) => qsRecord(seq));
const TRANSITIONS = QS_RECORDS.filter((r) => r.name === 'QS_QEP_TRAN');
const STP_RECORDS: TraceRecord[] = [0, 1, 2].map((seq) => ({
  rig: 'rig1',
  link: 'stm0',
  session: 's-stp',
  seq,
  chunk: seq,
  protocol: 'stp',
  hostNs: (T0 + 5000n * MS + BigInt(seq) * MS).toString(),
  targetTs: null,
  kind: 'record',
  type: 4,
  name: 'STP_MESSAGE',
  stp: { master: 16, channel: seq },
  fields: { n: seq },
  text: `M16 C${seq} message ${seq}`,
  raw: Buffer.from([seq, 0x7e]).toString('base64'),
}));

/** Raw chunks of the QS session as the gateway sent them: bytes, a loss before chunk 1, a pause before chunk 2, the end. */
const LINK_CHUNKS = [
  { chunk: 0, recvNs: T0, lost: 0, eos: false, pauseNs: undefined, data: [1, 2, 3] },
  { chunk: 1, recvNs: T0 + 700n * MS, lost: 4, eos: false, pauseNs: undefined, data: [4, 5] },
  { chunk: 2, recvNs: T0 + 1400n * MS, lost: 0, eos: false, pauseNs: 7n * MS, data: [6] },
  { chunk: 3, recvNs: T0 + 2100n * MS, lost: 0, eos: true, pauseNs: undefined, data: [] },
];

/**
 * A block of link bytes in the layout of migration 0005's time, written out here byte by byte:
 * u32 count, per chunk { u32 chunk, u32 length, u32 lost, u8 flags (1 eos, 2 pause), 3 x u8 0,
 * u64 recvNs, u64 pauseNs }, then the bytes; compressed with raw deflate (codec 1).
 */
function linkBlock0005(chunks: typeof LINK_CHUNKS): Buffer {
  const entries = chunks.map((c) => {
    const e = Buffer.alloc(32);
    e.writeUInt32LE(c.chunk, 0);
    e.writeUInt32LE(c.data.length, 4);
    e.writeUInt32LE(c.lost, 8);
    e[12] = (c.eos ? 1 : 0) | (c.pauseNs !== undefined ? 2 : 0);
    e.writeBigUInt64LE(c.recvNs, 16);
    e.writeBigUInt64LE(c.pauseNs ?? 0n, 24);
    return e;
  });
  const count = Buffer.alloc(4);
  count.writeUInt32LE(chunks.length);
  return zlib.deflateRawSync(Buffer.concat([count, ...entries, ...chunks.map((c) => Buffer.from(c.data))]));
}

/** What 0001's tables held, as its version wrote them (`records` one row per record). */
interface Tables0001 {
  rigs: { name: string; first_seen: Date; last_seen: Date };
  links: { rig: string; name: string; protocol: string; settings: string };
  sessions: {
    id: string;
    rig: string;
    link: string;
    protocol: string;
    started_at: Date;
    ended_at: Date | null;
    last_chunk: number;
    record_count: string;
    error_count: string;
    gap_count: string;
    lost_bytes: string;
    target_info: string | null;
    first_host_time: Date;
    last_host_time: Date;
  };
  dictionaries: { session: string; kind: string; key: string; name: string };
  records: Row0001;
}

/** Where and when the QS session ran, as its row says. */
const QS_SESSION = {
  rig: 'rig1',
  link: 'uart0',
  protocol: 'qs',
  started_at: hostDate(T0),
  ended_at: hostDate(T0 + 2100n * MS),
  last_chunk: 3,
};

async function fillAs0001(db: Kysely<Tables0001>): Promise<void> {
  await db
    .insertInto('rigs')
    .values({ name: 'rig1', first_seen: hostDate(T0), last_seen: hostDate(T0 + 5002n * MS) })
    .execute();
  await db
    .insertInto('links')
    .values([
      { rig: 'rig1', name: 'uart0', protocol: 'qs', settings: JSON.stringify({ qs: { objPtrSize: 4 } }) },
      { rig: 'rig1', name: 'stm0', protocol: 'stp', settings: '{}' },
    ])
    .execute();
  await db
    .insertInto('sessions')
    .values([
      {
        id: 's-qs',
        ...QS_SESSION,
        record_count: String(QS_COUNT),
        error_count: '1',
        gap_count: '0',
        lost_bytes: '5',
        target_info: JSON.stringify({ version: 740, objPtrSize: 4 }),
        first_host_time: hostDate(T0),
        last_host_time: hostDate(T0 + BigInt(QS_COUNT - 1) * MS),
      },
      {
        id: 's-stp',
        rig: 'rig1',
        link: 'stm0',
        protocol: 'stp',
        started_at: hostDate(T0 + 5000n * MS),
        ended_at: null,
        last_chunk: 2,
        record_count: '3',
        error_count: '0',
        gap_count: '0',
        lost_bytes: '0',
        target_info: null,
        first_host_time: hostDate(T0 + 5000n * MS),
        last_host_time: hostDate(T0 + 5002n * MS),
      },
    ])
    .execute();
  await db
    .insertInto('dictionaries')
    .values([
      { session: 's-qs', kind: 'QS_OBJ_DICT', key: 'obj=0x20001000', name: 'l_philo' },
      { session: 's-qs', kind: 'QS_SIG_DICT', key: 'sig=4,obj=0x0', name: 'TIMEOUT_SIG' },
    ])
    .execute();
  for (let i = 0; i < QS_RECORDS.length; i += 500)
    await db
      .insertInto('records')
      .values(QS_RECORDS.slice(i, i + 500).map(row0001))
      .execute();
  await db.insertInto('records').values(STP_RECORDS.map(row0001)).execute();
}

describe('a database filled by the first versions', () => {
  it('reads back the same through every later migration', async () => {
    const fresh = await freshDatabase('dbupgrade');
    const db = createDb(fresh.url);
    const old = db as unknown as Kysely<unknown>;
    try {
      await migrateTo(old, '0001-initial-schema');
      await fillAs0001(old as Kysely<Tables0001>);

      // 0004: a link's settings change, with its history.
      await migrateTo(old, '0004-link-settings-changes');
      const uart0 = await sql<{ id: number }>`select id from links where name = 'uart0'`.execute(old);
      const linkId = uart0.rows[0].id;
      const changedAt = hostDate(T0 - 60_000n * MS);
      await sql`
        insert into link_settings_changes (link_id, changed_at, changed_by, via, applies, previous, settings)
        values (${linkId}, ${changedAt}, 'ops', 'cli', 'next-session', '{}'::jsonb, '{"qs":{"objPtrSize":4}}'::jsonb)`.execute(
        old,
      );

      // 0005: the link's bytes, in the block layout of the time, and the session's counts of them.
      await migrateTo(old, '0005-link-chunks');
      await sql`
        insert into link_chunks (session, first_chunk, last_chunk, host_time, chunk_count, byte_count, lost_bytes, eos, codec, data)
        values ('s-qs', 0, 3, ${hostDate(T0)}, 4, 6, 4, true, 1, ${linkBlock0005(LINK_CHUNKS)})`.execute(old);
      await sql`update sessions set link_chunks = 4, link_bytes = 6, link_lost_bytes = 4 where id = 's-qs'`.execute(
        old,
      );

      // 0006: a retention applied.
      await migrateTo(old, '0006-retention');
      const cutoff = hostDate(T0 - 86_400_000n * MS);
      await sql`insert into retention (days, cutoff, applied_at) values (30, ${cutoff}, ${hostDate(T0)})`.execute(old);

      expect(await migrateToLatest(db, { partitionDaysAhead: 0 })).toEqual([
        '0007-record-blocks',
        '0008-session-link-settings',
        '0009-reporter-endpoints',
        '0010-record-losses',
        '0011-watch-rules-alerts',
        '0012-block-target-time',
        '0013-record-block-digests',
      ]);

      // Sessions, newest first, with what each migration added at its default.
      const { rows: sessions } = await sessionsPage(db, { rig: 'rig1' }, { limit: 10 });
      expect(sessions.map((s) => s.id)).toEqual(['s-stp', 's-qs']);
      expect(sessions[1]).toMatchObject({
        ...QS_SESSION,
        record_count: BigInt(QS_COUNT),
        error_count: 1n,
        lost_bytes: 5n,
        target_info: { version: 740, objPtrSize: 4 },
        record_total: null,
        link_chunks: 4,
        link_bytes: 6n,
        link_lost_bytes: 4n,
        link_settings: null,
        records_refused: 0n,
      });
      const summaries = await linkSummaries(db, { rig: 'rig1' });
      expect(summaries.find((l) => l.name === 'uart0')).toMatchObject({
        id: linkId,
        sessions: 1,
        records: BigInt(QS_COUNT),
        errors: 1n,
        latestSession: 's-qs',
      });

      // Every record, as it was written, from the blocks 0007 made of the rows.
      const { rows: blocks } = await sql<{ n: number }>`
        select count(*)::int as n from record_blocks where session = 's-qs'`.execute(db);
      expect(blocks[0].n).toBe(2);
      const read: TraceRecord[] = [];
      for await (const row of sessionRecords(db, 's-qs', 700)) read.push(rowToTraceRecord(row));
      expect(read).toEqual(QS_RECORDS);
      // 0007's blocks have no digest (0013 came later): a comparison digests their records instead.
      const digests: RecordsDigest[] = [];
      const budget = new ScanBudget();
      expect(await forEachSessionDigest(db, 's-qs', budget, (b) => digests.push(b.digest))).toBe(2);
      expect(digests.reduce((a, b) => mergeDigests(a, b)!)).toEqual(digestRecords(QS_RECORDS, stateOf));
      expect(budget.blocks).toBe(2);
      const stp: TraceRecord[] = [];
      for await (const row of sessionRecords(db, 's-stp')) stp.push(rowToTraceRecord(row));
      expect(stp).toEqual(STP_RECORDS);

      // Filters prune the converted blocks by their summaries and find what the rows held.
      const page = async (filter: Parameters<typeof recordsPage>[1]) =>
        (await recordsPage(db, filter, { order: 'asc', limit: 100 })).rows.map(rowToTraceRecord);
      expect(TRANSITIONS).toHaveLength(21);
      expect(await page({ session: 's-qs', names: ['QS_QEP_TRAN'] })).toEqual(TRANSITIONS);
      expect(await page({ kinds: ['error'] })).toEqual([QS_RECORDS[777]]);
      expect(await page({ text: 'philo_stat #2099' })).toEqual([QS_RECORDS[2099]]);
      expect(await page({ stpMaster: 16, stpChannel: 1 })).toEqual([STP_RECORDS[1]]);
      expect(await page({ qsObj: 'l_philo', from: hostDate(T0 + 2000n * MS) })).toEqual([QS_RECORDS[2050]]);

      // The state machine, from the converted blocks' records.
      const machines = await sessionStateMachines(db, 's-qs');
      const philo = machines.machines.find((m) => m.obj === 'l_philo');
      expect(philo?.transitions.filter((t) => t.from !== null).reduce((n, t) => n + t.count, 0)).toBe(21);
      expect(philo?.transitions).toContainEqual(
        expect.objectContaining({ from: 'thinking', to: 'hungry', sig: 'TIMEOUT_SIG', count: 7 }),
      );

      // Dictionaries, settings and their history, link bytes, retention: as they were.
      expect(await sessionDictionaries(db, 's-qs')).toEqual([
        { kind: 'QS_OBJ_DICT', key: 'obj=0x20001000', name: 'l_philo' },
        { kind: 'QS_SIG_DICT', key: 'sig=4,obj=0x0', name: 'TIMEOUT_SIG' },
      ]);
      expect(await getLinkSettings(db, 'rig1', 'uart0')).toEqual({ qs: { objPtrSize: 4 } });
      expect(await linkSettingsChanges(db, linkId)).toMatchObject([
        {
          changed_at: changedAt,
          changed_by: 'ops',
          via: 'cli',
          applies: 'next-session',
          previous: {},
          settings: { qs: { objPtrSize: 4 } },
        },
      ]);
      const chunks = [];
      for await (const c of sessionLinkChunks(db, 's-qs')) chunks.push({ ...c, data: [...c.data] });
      expect(chunks).toEqual(LINK_CHUNKS.map(({ pauseNs, ...c }) => (pauseNs === undefined ? c : { ...c, pauseNs })));
      expect(await sessionLinkLosses(db, 's-qs')).toEqual([{ chunk: 1, offset: 3, lost: 4 }]);
      expect(await isSessionLinkComplete(db, 's-qs')).toBe(true);
      expect(await historyRange(db)).toMatchObject({ from: hostDate(T0), retentionDays: 30 });

      // Today's writer carries on where the old rows stopped.
      const next = { ...qsRecord(QS_COUNT - 1), seq: QS_COUNT, hostNs: (T0 + BigInt(QS_COUNT) * MS).toString() };
      await insertRecords(db as Kysely<Database>, [next]);
      const after: TraceRecord[] = [];
      for await (const row of sessionRecords(db, 's-qs', 5000, BigInt(QS_COUNT - 2))) after.push(rowToTraceRecord(row));
      expect(after).toEqual([QS_RECORDS[QS_COUNT - 1], next]);
    } finally {
      await db.destroy();
      await fresh.drop();
    }
  });
});
