import { beforeAll, describe, expect, it } from 'vitest';
import {
  filteredRecords,
  insertRecords,
  linkSummaries,
  positionOf,
  type RecordPosition,
  recordsPage,
  sessionsPage,
  upsertLink,
  upsertSession,
} from '../src/index.js';
import { qsRecord, stpRecord } from './records-fixture.js';
import { migratedDatabaseForFile } from './test-database.js';

const db = migratedDatabaseForFile('dbq');
const T0 = 1_764_000_000_000_000_000n;

beforeAll(async () => {
  await upsertLink(db, { rig: 'rig7', name: 'uart0', protocol: 'qs' });
  await upsertLink(db, { rig: 'rig8', name: 'stp-a', protocol: 'stp' });
  for (const [id, rig, link, ms] of [
    ['a', 'rig7', 'uart0', 1],
    ['b', 'rig7', 'uart0', 2],
    ['c', 'rig8', 'stp-a', 2],
  ] as const) {
    await upsertSession(db, { id, rig, link, protocol: 'qs', startedAt: new Date(Number(T0 / 1_000_000n) + ms) });
  }
  // Two sessions interleaved in time, several records per microsecond: the order must still be total.
  const records = [];
  for (let i = 0; i < 40; i++) {
    records.push(qsRecord(i, (T0 + BigInt(Math.floor(i / 3)) * 1000n).toString(), 'a'));
    records.push(qsRecord(i, (T0 + BigInt(Math.floor(i / 2)) * 1000n + 1n).toString(), 'b'));
  }
  for (let i = 0; i < 10; i++) records.push(stpRecord(i, (T0 + BigInt(i) * 1000n).toString(), 'c'));
  await insertRecords(db, records);
});

const ids = (rows: Array<{ session: string; seq: bigint }>) => rows.map((r) => `${r.session}/${r.seq}`);

describe('recordsPage', () => {
  it('pages forward and back in both orders without gaps or repeats', async () => {
    const rows = [];
    for await (const row of filteredRecords(db, { rig: 'rig7' }, 'asc', 9)) rows.push(row);
    const everything = ids(rows);
    expect(everything).toHaveLength(80);
    for (const order of ['asc', 'desc'] as const) {
      const want = order === 'asc' ? everything : everything.slice().reverse();
      const pages = [];
      let after: RecordPosition | undefined;
      for (;;) {
        const page = await recordsPage(db, { rig: 'rig7' }, { order, limit: 7, after });
        pages.push(page.rows);
        if (!page.hasMore) break;
        after = positionOf(page.rows[page.rows.length - 1]);
      }
      expect(ids(pages.flat())).toEqual(want);
      const back = await recordsPage(db, { rig: 'rig7' }, { order, limit: 7, before: positionOf(pages[3][0]) });
      expect(ids(back.rows)).toEqual(ids(pages[2]));
      expect(back.hasPrevious).toBe(true);
    }
  });

  it('filters by STP address, kind and literal text (LIKE wildcards escaped)', async () => {
    const stp = await recordsPage(
      db,
      { stpMaster: 0xffff, stpChannel: 12, kinds: ['error'] },
      { order: 'asc', limit: 100 },
    );
    expect(stp.rows).toHaveLength(10);
    const none = await recordsPage(db, { text: '%_%' }, { order: 'asc', limit: 100 });
    expect(none.rows).toHaveLength(0);
    const quoted = await recordsPage(db, { text: "'QUOTED'", session: 'a' }, { order: 'asc', limit: 100 });
    expect(quoted.rows).toHaveLength(40);
  });
});

describe('fleet and sessions', () => {
  it('summarises links and pages sessions newest first', async () => {
    const links = await linkSummaries(db);
    expect(links.map((l) => `${l.rig}/${l.name}:${l.sessions}:${l.latestSession}`)).toEqual([
      'rig7/uart0:2:b',
      'rig8/stp-a:1:c',
    ]);
    const first = await sessionsPage(db, {}, { limit: 2 });
    expect(first.rows.map((s) => s.id)).toEqual(['c', 'b']);
    const second = await sessionsPage(db, {}, { limit: 2, after: first.last });
    expect(second.rows.map((s) => s.id)).toEqual(['a']);
    expect(second.hasMore).toBe(false);
  });
});
