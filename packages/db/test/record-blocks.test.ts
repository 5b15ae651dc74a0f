import { digestRecords, nodeZstd, stateOf, summarizeRecords, type TraceRecord } from '@tracehub/contracts';
import { freshDatabase } from '@tracehub/tests/support';
import {
  type Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  sql,
  type UnknownRow,
} from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BlockCodec,
  compactRecordBlocks,
  createDb,
  type Database,
  decodeStoredDigest,
  insertRecords,
  migrateDown,
  migrateToLatest,
  migrations,
  type RecordFilter,
  type RecordPosition,
  recordsPage,
  ScanBudget,
  ScanLimitError,
  sessionRecordsPage,
  sessionStateMachines,
  sessionTargetTimeline,
  sessionTargetWindow,
  storeRecords,
  timelineStateChanges,
} from '../src/index.js';
import { migratedDatabaseForFile } from './test-database.js';

/** A small deterministic generator (an LCG): the same dataset on every run. */
const seededRandom = (seed: number) => () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;

const db = migratedDatabaseForFile('dbblocks');

// Well in the past, so compaction finds every block settled.
const T0 = BigInt(Date.UTC(2026, 0, 5, 8)) * 1_000_000n;
const NAMES = ['QS_QEP_TRAN', 'QS_QEP_STATE_ENTRY', 'PHILO_STAT', 'QS_QF_ACTIVE_POST', 'SEQ_GAP'];
const OBJS = ['Philo_inst[0]', 'Philo_inst[1]', 'Table_inst'];

/**
 * Records of three sessions on two links, interleaved in time as a fleet's are: host times
 * rise within a session, several records share a µs, and sessions overlap.
 */
function dataset(): TraceRecord[] {
  const random = seededRandom(7);
  const out: TraceRecord[] = [];
  const sessions = [
    { session: 'S-A', rig: 'rig1', link: 'uart0', start: 0n },
    { session: 'S-B', rig: 'rig1', link: 'uart1', start: 2_000_000n },
    { session: 'S-C', rig: 'rig2', link: 'uart0', start: 1_000_000n },
  ];
  for (const s of sessions) {
    let host = T0 + s.start;
    for (let seq = 0; seq < 3000; seq++) {
      if (random() < 0.7) host += BigInt(Math.floor(random() * 3000)); // ns: many records share a µs
      const name = NAMES[Math.floor(random() * NAMES.length)];
      const obj = OBJS[Math.floor(random() * OBJS.length)];
      out.push({
        rig: s.rig,
        link: s.link,
        session: s.session,
        seq,
        chunk: Math.floor(seq / 10),
        protocol: 'qs',
        hostNs: host.toString(),
        targetTs: String(seq * 100),
        kind: name === 'SEQ_GAP' ? 'error' : 'record',
        type: NAMES.indexOf(name),
        name,
        qs: { obj, sig: seq % 2 ? 'EAT_SIG' : 'TIMEOUT_SIG', prio: (seq % 5) + 1 },
        fields: { target: `state${seq % 4}`, obj },
        text:
          seq % 500 === 7
            ? `${seq} say "Hi" \\ C:\\path\nÉcole`
            : `${seq} ${name} Obj=${obj} needle${seq % 97 === 0 ? 'X' : ''}`,
        raw: Buffer.from([seq & 0xff]).toString('base64'),
      });
    }
  }
  return out;
}

const all = dataset();

/** The expected order, written out plainly: host time in µs, then session, then seq. */
function expected(filter: (r: TraceRecord) => boolean, order: 'asc' | 'desc'): string[] {
  const keyed = all.filter(filter).map((r) => ({ us: BigInt(r.hostNs) / 1000n, r }));
  keyed.sort((a, b) =>
    a.us !== b.us
      ? a.us < b.us
        ? -1
        : 1
      : a.r.session !== b.r.session
        ? a.r.session < b.r.session
          ? -1
          : 1
        : a.r.seq - b.r.seq,
  );
  if (order === 'desc') keyed.reverse();
  return keyed.map((k) => `${k.r.session}:${k.r.seq}`);
}

async function walk(filter: RecordFilter, order: 'asc' | 'desc', limit: number): Promise<string[]> {
  const seen: string[] = [];
  let after: RecordPosition | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await recordsPage(db, filter, { order, limit, after });
    seen.push(...page.rows.map((r) => `${r.session}:${r.seq}`));
    if (!page.hasMore) return seen;
    const last = page.rows[page.rows.length - 1];
    after = { hostMicros: last.host_ns / 1000n, session: last.session, seq: last.seq };
  }
  throw new Error('paging did not end');
}

describe('records in blocks', () => {
  beforeAll(async () => {
    // Stored in uneven batches, each re-sent in part (a re-delivery), as storage meets them.
    const random = seededRandom(11);
    const bySession = ['S-A', 'S-B', 'S-C'].map((s) => all.filter((r) => r.session === s));
    for (const records of bySession) {
      let at = 0;
      while (at < records.length) {
        const n = 1 + Math.floor(random() * 400);
        const back = Math.floor(random() * Math.min(at, 50));
        await insertRecords(db, records.slice(at - back, at + n));
        at += n;
      }
    }
  });

  it('keeps every record once, whatever was sent again', async () => {
    for (const s of ['S-A', 'S-B', 'S-C']) {
      const rows = await sessionRecordsPage(db, s, -1, 10_000);
      expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    }
    const { rows } = await sql<{ overlaps: number }>`
      select count(*)::int as overlaps from record_blocks a join record_blocks b
        on a.session = b.session and a.id < b.id and a.first_seq <= b.last_seq and b.first_seq <= a.last_seq`.execute(
      db,
    );
    expect(rows[0].overlaps).toBe(0);
  });

  const filters: Array<[string, RecordFilter, (r: TraceRecord) => boolean]> = [
    ['everything', {}, () => true],
    ['one link', { rig: 'rig1', link: 'uart1' }, (r) => r.rig === 'rig1' && r.link === 'uart1'],
    [
      'a name and an object',
      { names: ['PHILO_STAT'], qsObj: 'Table_inst' },
      (r) => r.name === 'PHILO_STAT' && r.qs?.obj === 'Table_inst',
    ],
    ['errors', { kinds: ['error'] }, (r) => r.kind === 'error'],
    ['text', { text: 'NEEDLEx' }, (r) => r.text.toLowerCase().includes('needlex')],
    [
      'text with quotes, backslashes, a line break and an accent',
      { text: '"hi" \\ c:\\PATH\né' },
      (r) => r.text.toLowerCase().includes('"hi" \\ c:\\path\né'),
    ],
    ['text in another case, accented', { text: 'éCOLE' }, (r) => r.text.toLowerCase().includes('école')],
    [
      'a time range',
      {
        from: new Date(Number((T0 + 1_000_000n) / 1_000_000n)),
        to: new Date(Number((T0 + 3_000_000n) / 1_000_000n)),
      },
      (r) => {
        const us = BigInt(r.hostNs) / 1000n;
        return us >= (T0 + 1_000_000n) / 1000n && us < (T0 + 3_000_000n) / 1000n;
      },
    ],
  ];

  for (const [what, filter, plain] of filters) {
    it(`pages ${what} in both orders exactly as the order says`, async () => {
      expect(expected(plain, 'asc').length).toBeGreaterThan(0);
      for (const order of ['asc', 'desc'] as const) {
        expect(await walk(filter, order, 137)).toEqual(expected(plain, order));
      }
    });
  }

  it('pages back to the very records it paged forward over', async () => {
    const first = await recordsPage(db, {}, { order: 'asc', limit: 50 });
    const last = first.rows[first.rows.length - 1];
    const second = await recordsPage(
      db,
      {},
      { order: 'asc', limit: 50, after: { hostMicros: last.host_ns / 1000n, session: last.session, seq: last.seq } },
    );
    const head = second.rows[0];
    const back = await recordsPage(
      db,
      {},
      { order: 'asc', limit: 50, before: { hostMicros: head.host_ns / 1000n, session: head.session, seq: head.seq } },
    );
    expect(back.rows.map((r) => `${r.session}:${r.seq}`)).toEqual(first.rows.map((r) => `${r.session}:${r.seq}`));
    expect(back.hasPrevious).toBe(false);
  });

  it('refuses a query that would read more than its budget', async () => {
    await expect(
      recordsPage(db, { text: 'no such text' }, { order: 'asc', limit: 10, budget: new ScanBudget(100_000) }),
    ).rejects.toBeInstanceOf(ScanLimitError);
  });

  it('merges small blocks into larger ones without changing a record or an answer', async () => {
    const before = await sql<{ n: number }>`select count(*)::int as n from record_blocks`.execute(db);
    const pageBefore = await walk({ names: ['QS_QEP_TRAN'] }, 'desc', 500);
    const sessionBefore = await sessionRecordsPage(db, 'S-B', -1, 10_000);
    const timeline = () =>
      sessionTargetTimeline(db, 'S-B', { segment: 0, buckets: 37, detail: 0, budget: new ScanBudget() });
    const timelineBefore = await timeline();
    const machinesBefore = await sessionStateMachines(db, 'S-B');
    const result = await compactRecordBlocks(db, { targetRecords: 2000, minAgeMs: 0 });
    const after = await sql<{ n: number }>`select count(*)::int as n from record_blocks`.execute(db);
    expect(result.blocksBefore).toBeGreaterThan(result.blocksAfter);
    expect(after.rows[0].n).toBe(before.rows[0].n - result.blocksBefore + result.blocksAfter);
    expect(after.rows[0].n).toBeLessThan(before.rows[0].n / 2);
    expect(await walk({ names: ['QS_QEP_TRAN'] }, 'desc', 500)).toEqual(pageBefore);
    expect(await sessionRecordsPage(db, 'S-B', -1, 10_000)).toEqual(sessionBefore);
    // Merged blocks keep a target index and state-machine tallies: the same answers, from summaries alone.
    const blocks = await db.selectFrom('record_blocks').select(['target_index', 'machines']).execute();
    expect(blocks.every((b) => b.target_index !== null && b.machines !== null)).toBe(true);
    const budget = new ScanBudget();
    const timelineAfter = await sessionTargetTimeline(db, 'S-B', { segment: 0, buckets: 37, detail: 0, budget });
    expect(budget.scannedBytes).toBe(0);
    expect(timelineAfter).toEqual(timelineBefore);
    expect(await sessionStateMachines(db, 'S-B')).toEqual(machinesBefore);
    // Per lane as the records say: an active object's QEP and active-object records, the link the rest.
    const lanes = new Map<string | null, number>();
    for (const r of all.filter((x) => x.session === 'S-B')) {
      const lane = /^QS_QEP_|^QS_QF_ACTIVE_/.test(r.name) ? r.qs!.obj! : null;
      lanes.set(lane, (lanes.get(lane) ?? 0) + 1);
    }
    expect(new Map(timelineAfter.lanes.map((l) => [l.track, l.records]))).toEqual(lanes);
  });

  it('reads a window of target time from the blocks that reach it, skipping those before it', async () => {
    const blocks = await db.selectFrom('record_blocks').select('id').where('session', '=', 'S-A').execute();
    expect(blocks.length).toBeGreaterThan(1);
    const budget = new ScanBudget();
    // S-A's records are stamped seq × 100: the window holds seqs 2900 to 2904, in its last block.
    const page = await sessionTargetWindow(db, 'S-A', {
      segment: 0,
      fromTicks: 290_000n,
      toTicks: 290_500n,
      limit: 10,
      budget,
    });
    expect(page.records.map((r) => r.seq)).toEqual([2900, 2901, 2902, 2903, 2904]);
    expect(budget.blocks).toBe(1);
  });

  it('gives the last state of each object before a timeline window from block summaries', async () => {
    const fromNs = BigInt(all.filter((r) => r.session === 'S-A')[2500].hostNs);
    const changes = await timelineStateChanges(
      db,
      { session: 'S-A', rig: 'rig1', link: 'uart0', fromNs, toNs: fromNs + 1_000_000n },
      100,
    );
    const lastBefore = new Map<string, TraceRecord>();
    for (const r of all) {
      if (r.session === 'S-A' && r.name === 'QS_QEP_TRAN' && BigInt(r.hostNs) < fromNs) lastBefore.set(r.qs!.obj!, r);
    }
    const before = changes.filter((c) => c.hostNs < fromNs);
    expect(new Map(before.map((c) => [c.track, Number(c.seq)]))).toEqual(
      new Map([...lastBefore].map(([obj, r]) => [obj, r.seq])),
    );
  });
});

describe('records that arrive out of order', () => {
  const piece = (records: TraceRecord[]) => ({
    json: Buffer.from(JSON.stringify(records).slice(1, -1)),
    summary: summarizeRecords(records),
  });
  const place = { session: 'S-GAP', rig: 'rig9', link: 'uart9', protocol: 'qs' };
  const of = (from: number, to: number) =>
    all
      .filter((r) => r.session === 'S-A' && r.seq >= from && r.seq < to)
      .map((r) => ({ ...r, session: 'S-GAP', rig: 'rig9', link: 'uart9' }));

  it('keeps a batch that came before its predecessor, and the predecessor when it comes', async () => {
    // A storage that died held seq 100-199; the next one got 0-99 and 200-299 first.
    await storeRecords(db, [{ session: 'S-GAP', place, pieces: [piece(of(0, 100)), piece(of(200, 300))] }]);
    await compactRecordBlocks(db, { targetRecords: 2000, minAgeMs: 0 });
    const late = await storeRecords(db, [{ session: 'S-GAP', place, pieces: [piece(of(100, 200))] }]);
    expect(late.inserted).toBe(100);
    await insertRecords(db, of(250, 400)); // parsed records, half of them stored already
    const rows = await sessionRecordsPage(db, 'S-GAP', -1, 10_000);
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 400 }, (_, i) => i));
    await compactRecordBlocks(db, { targetRecords: 2000, minAgeMs: 0 });
    expect((await sessionRecordsPage(db, 'S-GAP', -1, 10_000)).length).toBe(400);
  });
});

describe('pieces that came as zstd frames', () => {
  it('are stored as they came, and read back, searched and compacted as any block', async () => {
    const place = { session: 'S-FRAMES', rig: 'rig7', link: 'uart7', protocol: 'qs' };
    const list = all
      .filter((r) => r.session === 'S-C' && r.seq < 600)
      .map((r) => ({ ...r, session: 'S-FRAMES', rig: 'rig7', link: 'uart7' }));
    // As the bus carries them: the inside of each piece's JSON array as one frame.
    const framed = (records: TraceRecord[]) => {
      const inside = Buffer.from(JSON.stringify(records).slice(1, -1));
      return { frame: nodeZstd!.compress(inside, 1), jsonBytes: inside.length, summary: summarizeRecords(records) };
    };
    for (let at = 0; at < list.length; at += 100) {
      await storeRecords(db, [
        {
          session: 'S-FRAMES',
          place,
          pieces: [framed(list.slice(at, at + 50)), framed(list.slice(at + 50, at + 100))],
        },
      ]);
    }
    const codecs = await db
      .selectFrom('record_blocks')
      .select(['codec', 'byte_count'])
      .where('session', '=', 'S-FRAMES')
      .execute();
    expect(codecs.map((b) => b.codec)).toEqual(Array(6).fill(BlockCodec.ZstdPieces));
    // Each keeps the digest of its records, merged from its pieces' summaries.
    const digests = async () =>
      (
        await db
          .selectFrom('record_blocks')
          .select('digest')
          .where('session', '=', 'S-FRAMES')
          .orderBy('first_seq')
          .execute()
      ).map((b) => (b.digest ? decodeStoredDigest(b.digest) : null));
    expect(await digests()).toEqual(
      Array.from({ length: 6 }, (_, i) => digestRecords(list.slice(i * 100, i * 100 + 100), stateOf)),
    );
    // A block's byte count is its records' JSON as an array, as for any block.
    expect(codecs[0].byte_count).toBe(Buffer.byteLength(JSON.stringify(list.slice(0, 100))));
    const rows = await sessionRecordsPage(db, 'S-FRAMES', -1, 10_000);
    expect(rows.map((r) => [Number(r.seq), r.text])).toEqual(list.map((r) => [r.seq, r.text]));
    const needle = list.find((r) => r.text.includes('needleX'))!;
    const found = await recordsPage(db, { session: 'S-FRAMES', text: 'needlex' }, { order: 'asc', limit: 100 });
    expect(found.rows.map((r) => Number(r.seq))).toEqual(
      list.filter((r) => r.text.includes('needleX')).map((r) => r.seq),
    );
    expect(found.rows[0].text).toBe(needle.text);
    // A re-delivery of a framed piece is sorted out record by record.
    const again = await storeRecords(db, [{ session: 'S-FRAMES', place, pieces: [framed(list.slice(90, 120))] }]);
    expect(again.inserted).toBe(0);
    await compactRecordBlocks(db, { targetRecords: 2000, minAgeMs: 0 });
    const merged = await db.selectFrom('record_blocks').select('codec').where('session', '=', 'S-FRAMES').execute();
    expect(merged).toHaveLength(1);
    expect(await digests()).toEqual([digestRecords(list, stateOf)]);
    expect((await sessionRecordsPage(db, 'S-FRAMES', -1, 10_000)).map((r) => Number(r.seq))).toEqual(
      list.map((r) => r.seq),
    );
  });
});

describe('readers while a compaction merges the blocks they walk', () => {
  /**
   * Runs a compaction on another connection right after the reader's first read of blocks,
   * between two of its rounds: the moment a reader on a live system can meet one.
   */
  class CompactAfterFirstBlockRead implements KyselyPlugin {
    merged = -1;
    transformQuery(args: PluginTransformQueryArgs) {
      return args.node;
    }
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (this.merged < 0 && args.result.rows.length > 0 && 'data' in args.result.rows[0]) {
        const { blocksBefore } = await compactRecordBlocks(db, { targetRecords: 2000, minAgeMs: 0 });
        this.merged = blocksBefore;
      }
      return args.result;
    }
  }
  const place = { session: 'S-MERGE', rig: 'rig8', link: 'uart8', protocol: 'qs' };
  const records = () =>
    all
      .filter((r) => r.session === 'S-B' && r.seq < 1500)
      .map((r) => ({ ...r, session: 'S-MERGE', rig: 'rig8', link: 'uart8' }));

  /** The session stored as a slow link's storage stores it: a small block a batch. */
  async function storeInSmallBlocks(): Promise<void> {
    await sql`delete from record_blocks where session = 'S-MERGE'`.execute(db);
    const list = records();
    for (let at = 0; at < list.length; at += 15) {
      const part = list.slice(at, at + 15);
      await storeRecords(db, [
        {
          session: 'S-MERGE',
          place,
          pieces: [{ json: Buffer.from(JSON.stringify(part).slice(1, -1)), summary: summarizeRecords(part) }],
        },
      ]);
    }
  }

  it('reads a session in seq order once each, neither doubled nor dropped', async () => {
    await storeInSmallBlocks();
    const plugin = new CompactAfterFirstBlockRead();
    const rows = await sessionRecordsPage(db.withPlugin(plugin), 'S-MERGE', -1, 10_000);
    expect(plugin.merged).toBeGreaterThan(10);
    expect(rows.map((r) => Number(r.seq))).toEqual(records().map((r) => r.seq));
  });

  it('reads a filtered page once each, neither doubled nor dropped', async () => {
    await storeInSmallBlocks();
    const plugin = new CompactAfterFirstBlockRead();
    const page = await recordsPage(db.withPlugin(plugin), { session: 'S-MERGE' }, { order: 'asc', limit: 1000 });
    expect(plugin.merged).toBeGreaterThan(10);
    expect(page.rows.map((r) => Number(r.seq))).toEqual(
      records()
        .slice(0, 1000)
        .map((r) => r.seq),
    );
  });
});

/** Undoes migrations, newest first, until `name` has been undone. */
async function downThrough(db: Kysely<Database>, name: string): Promise<void> {
  for (;;) {
    const undone = await migrateDown(db);
    if (undone.length === 0 || undone.includes(name)) return;
  }
}

describe('migration 0007', () => {
  it('converts records stored one row each into blocks that read back the same', async () => {
    const old = await freshDatabase('dbblkmig');
    const odb = createDb(old.url);
    try {
      await migrateToLatest(odb);
      await downThrough(odb, '0007-record-blocks'); // back to one row per record
      const records = all.filter((r) => r.session === 'S-C').slice(0, 2500);
      await sql`
        insert into records (session, seq, host_time, host_ns, rig, link, protocol, chunk, target_ts, kind, type, name,
                             qs_obj, qs_sig, qs_prio, stp_master, stp_channel, fields, text, raw)
        select session, seq, timestamptz 'epoch' + ("hostNs" / 1000) * interval '1 microsecond', "hostNs", rig, link,
               protocol, chunk, "targetTs", kind, type, name, qs->>'obj', qs->>'sig', (qs->>'prio')::int,
               null, null, fields::jsonb, text, decode(raw, 'base64')
        from json_to_recordset(${JSON.stringify(records)}::json) as r(
          session text, seq bigint, "hostNs" bigint, rig text, link text, protocol text, chunk int, "targetTs" numeric,
          kind text, type int, name text, qs json, fields json, text text, raw text)`.execute(odb);
      const names = Object.keys(migrations);
      expect(await migrateToLatest(odb)).toEqual(names.slice(names.indexOf('0007-record-blocks')));
      const rows = await sessionRecordsPage(odb, 'S-C', -1, 10_000);
      expect(
        rows.map((r) => [Number(r.seq), r.host_ns.toString(), r.text, r.qs_obj, r.raw.toString('base64')]),
      ).toEqual(records.map((r) => [r.seq, r.hostNs, r.text, r.qs!.obj, r.raw]));
      const { rows: blocks } = await sql<{ n: number }>`select count(*)::int as n from record_blocks`.execute(odb);
      expect(blocks[0].n).toBe(2); // 2000 + 500
      // And back down: the blocks become rows again.
      await downThrough(odb, '0007-record-blocks');
      const { rows: back } = await sql<{
        n: number;
      }>`select count(*)::int as n from records where session = 'S-C'`.execute(odb);
      expect(back[0].n).toBe(2500);
    } finally {
      await odb.destroy();
      await old.drop();
    }
  });
});
