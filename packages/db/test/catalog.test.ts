import { describe, expect, it } from 'vitest';
import {
  addSessionCounts,
  getLinkSettings,
  insertRecordsJson,
  markSessionEnded,
  upsertLink,
  upsertRig,
  upsertSession,
} from '../src/index.js';
import { qsRecord } from './records-fixture.js';
import { migratedDatabaseForFile } from './test-database.js';

const db = migratedDatabaseForFile('dbcat', { partitionDaysAhead: 0 });

describe('rigs and links', () => {
  it('keep first_seen and move last_seen forward', async () => {
    await upsertRig(db, 'rig1', new Date('2025-01-01T00:00:00Z'));
    await upsertRig(db, 'rig1', new Date('2025-01-03T00:00:00Z'));
    await upsertRig(db, 'rig1', new Date('2025-01-02T00:00:00Z'));
    const rig = await db.selectFrom('rigs').selectAll().where('name', '=', 'rig1').executeTakeFirstOrThrow();
    expect(rig.first_seen.toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(rig.last_seen.toISOString()).toBe('2025-01-03T00:00:00.000Z');
  });

  it('store codec settings per link and keep them when an update gives none', async () => {
    const settings = { stpVersion: 2, littleEndianMasters: [3, 4], output: 'ost' };
    const id = await upsertLink(db, { rig: 'rig2', name: 'stp0', protocol: 'stp', settings });
    expect(await getLinkSettings(db, 'rig2', 'stp0')).toEqual(settings);
    expect(await upsertLink(db, { rig: 'rig2', name: 'stp0', protocol: 'stp' })).toBe(id);
    expect(await getLinkSettings(db, 'rig2', 'stp0')).toEqual(settings);
    await upsertLink(db, { rig: 'rig2', name: 'stp0', protocol: 'stp', settings: { stpVersion: 1 } });
    expect(await getLinkSettings(db, 'rig2', 'stp0')).toEqual({ stpVersion: 1 });
    expect(await getLinkSettings(db, 'rig2', 'nope')).toBeUndefined();
    expect(await db.selectFrom('rigs').select('name').where('name', '=', 'rig2').executeTakeFirst()).toBeDefined();
  });
});

describe('sessions', () => {
  it('accumulate counts, widen their host time range and end', async () => {
    const session = { id: 'sess-1', rig: 'rig1', link: 'uart0', protocol: 'qs', startedAt: new Date('2025-01-01Z') };
    await upsertSession(db, session);
    await upsertSession(db, { ...session, targetInfo: { endianness: 'little' } });
    await upsertSession(db, { ...session, startedAt: new Date('2030-01-01Z') });
    await addSessionCounts(db, 'sess-1', {
      records: 10,
      errors: 1,
      lastChunk: 4,
      firstHostTime: new Date('2025-01-01T00:00:02Z'),
      lastHostTime: new Date('2025-01-01T00:00:05Z'),
    });
    await addSessionCounts(db, 'sess-1', {
      records: 5,
      gaps: 2,
      lostBytes: 100,
      lastChunk: 3,
      firstHostTime: new Date('2025-01-01T00:00:01Z'),
      lastHostTime: new Date('2025-01-01T00:00:03Z'),
    });
    await markSessionEnded(db, 'sess-1', new Date('2025-01-01T01:00:00Z'), 7);
    const row = await db.selectFrom('sessions').selectAll().where('id', '=', 'sess-1').executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      started_at: new Date('2025-01-01Z'),
      target_info: { endianness: 'little' },
      record_count: 15n,
      error_count: 1n,
      gap_count: 2n,
      lost_bytes: 100n,
      last_chunk: 7,
      first_host_time: new Date('2025-01-01T00:00:01Z'),
      last_host_time: new Date('2025-01-01T00:00:05Z'),
      ended_at: new Date('2025-01-01T01:00:00Z'),
    });
  });
});

describe('dictionaries', () => {
  it('keep the newest name of each entry, across batches', async () => {
    const hostNs = (BigInt(Date.now()) * 1_000_000n).toString();
    const dict = (seq: number, name: string, fields: Record<string, unknown>) => ({
      ...qsRecord(seq, hostNs, 'sess-1'),
      kind: 'dict',
      name,
      fields,
    });
    const batch = (records: unknown[]) => insertRecordsJson(db, Buffer.from(JSON.stringify(records)));
    await batch([
      dict(0, 'QS_OBJ_DICT', { obj: '0x20000100', name: 'l_old' }),
      dict(1, 'QS_SIG_DICT', { sig: 4, obj: '0x0', name: 'TIMEOUT_SIG' }),
      dict(2, 'QS_OBJ_DICT', { obj: '0x20000100', name: 'l_blinky' }),
    ]);
    await batch([dict(3, 'QS_SIG_DICT', { sig: 4, obj: '0x0', name: 'TICK_SIG' })]);
    const rows = await db.selectFrom('dictionaries').selectAll().orderBy('kind').execute();
    expect(rows).toEqual([
      { session: 'sess-1', kind: 'QS_OBJ_DICT', key: 'obj=0x20000100', name: 'l_blinky' },
      { session: 'sess-1', kind: 'QS_SIG_DICT', key: 'sig=4,obj=0x0', name: 'TICK_SIG' },
    ]);
  });
});
