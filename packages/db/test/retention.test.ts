import { describe, expect, it } from 'vitest';
import {
  applyRetention,
  ensurePartitions,
  historyRange,
  insertLinkChunks,
  insertRecords,
  listPartitions,
  sessionLinkChunks,
  upsertSession,
} from '../src/index.js';
import { qsRecord } from './records-fixture.js';
import { migratedDatabaseForFile } from './test-database.js';

const db = migratedDatabaseForFile('dbret');

const DAY = 86_400_000;
const NOW = new Date('2026-03-20T12:00:00Z');
const ns = (d: Date) => (BigInt(d.getTime()) * 1_000_000n).toString();

async function storeSession(id: string, at: Date): Promise<void> {
  await upsertSession(db, { id, rig: 'rig7', link: 'uart0', protocol: 'qs', startedAt: at });
  await insertRecords(db, [qsRecord(0, ns(at), id), qsRecord(1, ns(at), id)]);
  await db.updateTable('sessions').set({ first_host_time: at, last_host_time: at }).where('id', '=', id).execute();
  await insertLinkChunks(db, [
    { session: id, chunks: [{ chunk: 0, recvNs: BigInt(ns(at)), lost: 0, eos: true, data: Buffer.from('bytes') }] },
  ]);
}

describe('retention', () => {
  it('drops whole days of records and link bytes older than the setting, and says how far back history goes', async () => {
    await ensurePartitions(db, { from: new Date(NOW.getTime() - 10 * DAY), daysAhead: 11 });
    const old = new Date(NOW.getTime() - 8 * DAY);
    const recent = new Date(NOW.getTime() - 1 * DAY);
    await storeSession('old', old);
    await storeSession('recent', recent);
    expect((await historyRange(db)).from).toEqual(old);

    const result = await applyRetention(db, 3, NOW);
    expect(result.cutoff).toEqual(new Date('2026-03-17T00:00:00Z'));
    expect(result.dropped).toContain('record_blocks_p20260312');
    expect(result.dropped).toContain('link_chunks_p20260312');
    expect(result.dropped.some((p) => p >= 'record_blocks_p20260317' && p.startsWith('record_blocks_'))).toBe(false);
    expect(result.sessions).toBe(1);
    expect(await listPartitions(db)).toContain('record_blocks_p20260319');
    expect(await listPartitions(db)).not.toContain('record_blocks_p20260316');

    const left = await db.selectFrom('record_blocks').select('session').distinct().execute();
    expect(left.map((r) => r.session)).toEqual(['recent']);
    const sessions = await db.selectFrom('sessions').select('id').execute();
    expect(sessions.map((s) => s.id)).toEqual(['recent']);
    const chunks = [];
    for await (const c of sessionLinkChunks(db, 'recent')) chunks.push(Buffer.from(c.data).toString());
    expect(chunks).toEqual(['bytes']);

    const history = await historyRange(db);
    expect(history.from).toEqual(recent);
    expect(history.retentionDays).toBe(3);
    expect(history.retentionAppliedAt).toEqual(NOW);
    // Applying it again changes nothing.
    expect((await applyRetention(db, 3, NOW)).dropped).toEqual([]);
  });

  it('refuses a retention that is not a whole number of days', async () => {
    await expect(applyRetention(db, 0)).rejects.toThrow(RangeError);
    await expect(applyRetention(db, 1.5)).rejects.toThrow(/whole number of days/);
  });
});
