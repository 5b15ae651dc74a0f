import type { TraceRecord } from '@tracehub/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  insertRecords,
  type TimelineWindow,
  timelineItems,
  timelineRecordsAtLeast,
  upsertLink,
  upsertSession,
} from '../src/index.js';
import { qsRecord } from './records-fixture.js';
import { migratedDatabaseForFile } from './test-database.js';

const db = migratedDatabaseForFile('dbtl');
const T0 = 1_764_000_000_000_000_000n;
const MS = 1_000_000n;
const window = (fromMs: bigint, toMs: bigint): TimelineWindow => ({
  session: 's1',
  rig: 'rig7',
  link: 'uart0',
  fromNs: T0 + fromMs * MS,
  toNs: T0 + toMs * MS,
});

/** `count` records from `seq`, one a microsecond from `atMs`. */
const records = (seq: number, count: number, atMs: bigint): TraceRecord[] =>
  Array.from({ length: count }, (_, i) => qsRecord(seq + i, (T0 + atMs * MS + BigInt(i) * 1000n).toString(), 's1'));

beforeAll(async () => {
  await upsertLink(db, { rig: 'rig7', name: 'uart0', protocol: 'qs' });
  await upsertSession(db, {
    id: 's1',
    rig: 'rig7',
    link: 'uart0',
    protocol: 'qs',
    startedAt: new Date(Number(T0 / MS)),
  });
  // Three blocks: at 0 ms a dictionary record and 9 others, at 10 ms 20 records, at 20 ms 30.
  const first = records(0, 10, 0n);
  first[0] = { ...first[0], kind: 'dict', name: 'QS_OBJ_DICT', qs: undefined };
  await insertRecords(db, first);
  await insertRecords(db, records(10, 20, 10n));
  await insertRecords(db, records(30, 30, 20n));
});

describe('timelineRecordsAtLeast', () => {
  it('counts the blocks wholly inside the window, not those holding a dictionary record', async () => {
    const blocks = await db
      .selectFrom('record_blocks')
      .select(['record_count', 'kinds'])
      .orderBy('first_seq')
      .execute();
    expect(blocks.map((b) => b.record_count)).toEqual([10, 20, 30]);
    expect(await timelineRecordsAtLeast(db, window(-1n, 100n))).toBe(50);
    // The last block only partly inside: not counted; the first holds a dictionary record.
    expect(await timelineRecordsAtLeast(db, window(-1n, 20n))).toBe(20);
    expect(await timelineRecordsAtLeast(db, window(10n, 11n))).toBe(20);
    // A window that cuts the second block (its records span 10 ms to 10 ms + 19 µs).
    expect(await timelineRecordsAtLeast(db, { ...window(10n, 11n), toNs: T0 + 10n * MS + 5000n })).toBe(0);
    expect(await timelineRecordsAtLeast(db, window(30n, 40n))).toBe(0);
  });

  it('is never more than the records a timeline shows of the window', async () => {
    for (const [from, to] of [
      [-1n, 100n],
      [-1n, 20n],
      [0n, 15n],
      [10n, 21n],
      [5n, 25n],
    ] as const) {
      const shown = (await timelineItems(db, window(from, to), 1000)).length;
      expect(await timelineRecordsAtLeast(db, window(from, to))).toBeLessThanOrEqual(shown);
    }
    expect((await timelineItems(db, window(-1n, 100n), 1000)).length).toBe(59);
  });
});
