// STORAGE_RETENTION_DAYS in a storage process: applied when it starts, to a database that
// holds a session older than the setting and one within it.
import { ensurePartitions, historyRange, insertRecords, migrateToLatest, upsertSession } from '@tracehub/db';
import { natsUrl, transitionRecord, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PipelineTestRun, removeBusPrefix, startPipelineTestRun, startService } from './harness.js';

const DAY = 86_400_000;
const prefix = uniquePrefix('stret');
let run: PipelineTestRun;

beforeAll(async () => {
  run = await startPipelineTestRun('stret');
}, 60_000);

afterAll(async () => {
  await run?.close();
  await removeBusPrefix(natsUrl(), prefix);
});

/** A session of `rigR/uart0` with three records at `at`. */
async function storeSession(id: string, at: Date): Promise<void> {
  await upsertSession(run.db, { id, rig: 'rigR', link: 'uart0', protocol: 'qs', startedAt: at });
  const hostNs = BigInt(at.getTime()) * 1_000_000n;
  const place = { rig: 'rigR', link: 'uart0', session: id };
  await insertRecords(
    run.db,
    [0, 1, 2].map((seq) => ({ ...transitionRecord(place, seq), hostNs: String(hostNs + BigInt(seq)) })),
  );
  await run.db.updateTable('sessions').set({ first_host_time: at, last_host_time: at }).where('id', '=', id).execute();
}

describe('STORAGE_RETENTION_DAYS', () => {
  it('drops the days older than the setting when storage starts, and says so', async () => {
    await migrateToLatest(run.db);
    const now = Date.now();
    await ensurePartitions(run.db, { from: new Date(now - 12 * DAY), daysAhead: 13 });
    await storeSession('s-old', new Date(now - 10 * DAY));
    await storeSession('s-new', new Date(now - DAY));

    const storage = await startService(
      'storage',
      { natsUrl: natsUrl(), databaseUrl: run.databaseUrl, prefix },
      { STORAGE_RETENTION_DAYS: '3' },
    );
    run.services.push(storage);
    const applied = JSON.parse(storage.stdout.find((l) => /"msg":"retention applied"/.test(l)) ?? '{}');
    expect(applied.sessions).toBe(1);
    expect(applied.partitions.length).toBeGreaterThan(0);

    const sessions = await run.db.selectFrom('sessions').select('id').orderBy('id').execute();
    expect(sessions.map((s) => s.id)).toEqual(['s-new']);
    const left = await run.db.selectFrom('record_blocks').select('session').distinct().execute();
    expect(left.map((r) => r.session)).toEqual(['s-new']);
    expect((await historyRange(run.db)).retentionDays).toBe(3);
  }, 90_000);
});
