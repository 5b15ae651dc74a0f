// Retention at its edges, on a database of its own: a session that spans the cutoff, rows in
// the default partition (a host whose clock was far off), and the dictionaries of the sessions
// it forgets.
import { describe, expect, it } from 'vitest';
import { applyRetention, ensurePartitions, insertRecords, upsertSession } from '../src/index.js';
import { qsRecord } from './records-fixture.js';
import { migratedDatabaseForFile } from './test-database.js';

const db = migratedDatabaseForFile('dbretedge');

const DAY = 86_400_000;
const NOW = new Date('2026-03-20T12:00:00Z');
const ns = (d: Date) => (BigInt(d.getTime()) * 1_000_000n).toString();

/** A session of `rig7/uart0` with one record at each of `times`, and a dictionary entry. */
async function storeSession(id: string, times: Date[]): Promise<void> {
  await upsertSession(db, { id, rig: 'rig7', link: 'uart0', protocol: 'qs', startedAt: times[0] });
  // One insert a time: each a block of its own, in its own day's partition.
  for (const [seq, at] of times.entries()) await insertRecords(db, [qsRecord(seq, ns(at), id)]);
  await db
    .updateTable('sessions')
    .set({ first_host_time: times[0], last_host_time: times.at(-1)! })
    .where('id', '=', id)
    .execute();
  await db
    .insertInto('dictionaries')
    .values({ session: id, kind: 'obj', key: '0x1000', name: `ao_${id}` })
    .execute();
}

const seqsOf = async (session: string) =>
  (
    await db
      .selectFrom('record_blocks')
      .select('first_seq')
      .where('session', '=', session)
      .orderBy('first_seq')
      .execute()
  ).map((r) => Number(r.first_seq));

describe('retention at its edges', () => {
  it('keeps a session that spans the cutoff with its newer days, and the default partition; forgets the dictionaries of the sessions it drops', async () => {
    await ensurePartitions(db, { from: new Date(NOW.getTime() - 10 * DAY), daysAhead: 11 });
    const cutoff = new Date('2026-03-17T00:00:00Z');
    // Records 8 and 5 days old (before the cutoff of 3 days), then 1 day old.
    await storeSession('spans', [
      new Date(NOW.getTime() - 8 * DAY),
      new Date(NOW.getTime() - 5 * DAY),
      new Date(NOW.getTime() - 1 * DAY),
    ]);
    await storeSession('gone', [new Date(NOW.getTime() - 6 * DAY)]);
    // A host whose clock said 2001: no daily partition takes it, the default one does.
    await storeSession('far-off', [new Date('2001-01-01T00:00:00Z')]);
    const defaultRows = await db
      .selectFrom('record_blocks_default' as 'record_blocks')
      .select('session')
      .execute();
    expect(defaultRows.map((r) => r.session)).toEqual(['far-off']);

    const result = await applyRetention(db, 3, NOW);
    expect(result.cutoff).toEqual(cutoff);

    // The session that spans the cutoff: its days before it are gone, the rest kept, and it is not forgotten.
    expect(await seqsOf('spans')).toEqual([2]);
    // The one wholly before it: records, session and dictionaries gone.
    expect(await seqsOf('gone')).toEqual([]);
    // The default partition is not a day: never dropped (its session, ended before the cutoff, is forgotten).
    expect(await seqsOf('far-off')).toEqual([0]);
    expect(result.dropped.some((p) => p.endsWith('_default'))).toBe(false);

    const sessions = await db.selectFrom('sessions').select('id').orderBy('id').execute();
    expect(sessions.map((s) => s.id)).toEqual(['spans']);
    const dictionaries = await db.selectFrom('dictionaries').select(['session', 'name']).orderBy('session').execute();
    expect(dictionaries).toEqual([{ session: 'spans', name: 'ao_spans' }]);
  });
});
