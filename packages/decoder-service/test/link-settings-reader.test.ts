// Hundreds of links asking for their settings at once (a fleet's gateways starting) are
// answered from a few statements, each link with its own settings, from a real Postgres.
import { createDb, getLinksSettings, migrateToLatest, upsertLink, upsertRig } from '@tracehub/db';
import { plannedDatabase } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LinkSettings, LinkSettingsReader } from '../src/index.js';

/** What the decoder service reads them with. */
const readSettings = async (links: Parameters<typeof getLinksSettings>[1]) =>
  (await getLinksSettings(db, links)) as Map<string, LinkSettings>;

const database = plannedDatabase('dsettings');
const db = createDb(database.url, { maxConnections: 2 });

beforeAll(async () => {
  await database.create();
  await migrateToLatest(db);
  await upsertRig(db, 'r1');
  for (let i = 0; i < 300; i++) {
    await upsertLink(db, { rig: 'r1', name: `l${i}`, protocol: 'qs', settings: { objPtrSize: i % 2 ? 4 : 8, n: i } });
  }
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

describe('link settings', () => {
  it('are read for 300 links asking at once in a few statements, each its own; an unknown link has none', async () => {
    const reads: number[] = [];
    const reader = new LinkSettingsReader(async (links) => {
      reads.push(links.length);
      return readSettings(links);
    });
    const asked = Array.from({ length: 300 }, (_, i) => reader.get({ protocol: 'qs', rig: 'r1', link: `l${i}` }));
    const unknown = reader.get({ protocol: 'qs', rig: 'r1', link: 'nowhere' });
    const settings = await Promise.all(asked);
    expect(settings.map((s) => s.n)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(settings[3]).toEqual({ objPtrSize: 4, n: 3 });
    expect(await unknown).toEqual({});
    // The first link at once, everyone who asked meanwhile in the next read.
    expect(reads).toEqual([1, 300]);
  });

  it('fail for every link of a read that fails, and the next read is made again', async () => {
    let fail = true;
    const reader = new LinkSettingsReader(async (links) => {
      if (fail) throw new Error('Postgres away');
      return readSettings(links);
    });
    const failed = await Promise.allSettled([reader.get({ protocol: 'qs', rig: 'r1', link: 'l1' })]);
    expect(failed[0]).toMatchObject({ status: 'rejected', reason: { message: 'Postgres away' } });
    fail = false;
    expect(await reader.get({ protocol: 'qs', rig: 'r1', link: 'l2' })).toEqual({ objPtrSize: 8, n: 2 });
  });
});
