// Real STP data for API and dashboard tests: a vector as `tracehub decode` decodes it, stored as
// storage stores it, and what its masters and channels carry, counted from that output alone.
import type { TraceRecord } from '@tracehub/contracts';
import type { Database, SessionChannels } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { offlineDecode } from '../pipeline/harness.js';
import { fixturePath } from './paths.js';
import { type SessionPlace, storeRecordBatches, storeSessionStart } from './stored-session.js';

/**
 * Decodes `fixtures/stp/<vector>.stp` with `tracehub decode` and stores its records in a
 * session of their own, a few records per batch (so the session has many blocks); record
 * `seq` is received `seq` ms after `startNs`, three records a chunk as a link delivers them.
 */
export async function storeStpFixture(
  db: Kysely<Database>,
  vector: string,
  place: SessionPlace,
): Promise<TraceRecord[]> {
  const records = (await offlineDecode(fixturePath('stp', `${vector}.stp`), 'stp')).map((r) => ({
    ...r,
    rig: place.rig,
    link: place.link,
    session: place.session,
    hostNs: String(place.startNs + BigInt(Math.floor(r.seq / 3)) * 1_000_000n),
  }));
  await storeSessionStart(db, place, 'stp');
  await storeRecordBatches(db, records, 8);
  return records;
}

const byNumber = (a: number, b: number) => a - b;

/** What each master and channel of `records` carries, counted directly from the records. */
export function expectedChannels(records: TraceRecord[]): SessionChannels {
  const addressed = records.filter((r) => r.stp !== undefined);
  const masters = [...new Set(addressed.map((r) => r.stp!.master))].sort(byNumber).map((master) => {
    const ofMaster = addressed.filter((r) => r.stp!.master === master);
    const channels = [...new Set(ofMaster.map((r) => r.stp!.channel))].sort(byNumber).map((channel) => {
      const on = ofMaster.filter((r) => r.stp!.channel === channel);
      const times = on.map((r) => BigInt(r.hostNs)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return {
        channel,
        records: on.length,
        errors: on.filter((r) => r.kind === 'error').length,
        firstHostNs: String(times[0]),
        lastHostNs: String(times[times.length - 1]),
        names: [...new Set(on.map((r) => r.name))].sort(),
      };
    });
    return {
      master,
      records: ofMaster.length,
      errors: ofMaster.filter((r) => r.kind === 'error').length,
      channels,
    };
  });
  const errorNames = records.filter((r) => r.kind === 'error').map((r) => r.name);
  const errors = [...new Set(errorNames)]
    .map((name) => ({ name, count: errorNames.filter((n) => n === name).length }))
    .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1));
  return { records: records.length, unaddressed: records.length - addressed.length, masters, errors };
}
