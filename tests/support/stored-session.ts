// A session stored as storage stores it, for the tests that need real rows without running
// storage: the link and the session first, then the records with the session's counts.
import type { TraceRecord } from '@tracehub/contracts';
import { addSessionCounts, type Database, insertRecordsJson, upsertLink, upsertSession } from '@tracehub/db';
import type { Kysely } from 'kysely';

/** Where a test stores a session: rig, link, session id, and when its first chunk arrived (host ns). */
export interface SessionPlace {
  rig: string;
  link: string;
  session: string;
  startNs: bigint;
}

/**
 * The link and the session as storage makes them on a session's first chunk (with the target's
 * info, if known); resolves with the link's id.
 */
export async function storeSessionStart(
  db: Kysely<Database>,
  place: SessionPlace,
  protocol: 'qs' | 'stp',
  targetInfo: Record<string, unknown> | null = null,
): Promise<number> {
  const linkId = await upsertLink(db, { rig: place.rig, name: place.link, protocol });
  await upsertSession(db, {
    id: place.session,
    rig: place.rig,
    link: place.link,
    protocol,
    startedAt: new Date(Number(place.startNs / 1_000_000n)),
    targetInfo,
  });
  return linkId;
}

/** Stores `records` in batches of `batchSize`, as storage writes a batch: records, then each session's counts. */
export async function storeRecordBatches(
  db: Kysely<Database>,
  records: TraceRecord[],
  batchSize = records.length,
): Promise<void> {
  for (let i = 0; i < records.length; i += batchSize) {
    const { sessions } = await insertRecordsJson(db, Buffer.from(JSON.stringify(records.slice(i, i + batchSize))));
    for (const { session, counts } of sessions) await addSessionCounts(db, session, counts);
  }
}
