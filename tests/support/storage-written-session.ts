// A session stored by storage itself: the decoder's record batches published on the bus as the
// decoder service publishes them (one per raw chunk, the session's end with its record count),
// taken from TRACE_REC and written by storage's RecordStore, so its record blocks are the zstd
// frames the records travelled in (codec ZstdPieces), not the JSON blocks of the seeding path.
import { type Bus, publishRecordBatch } from '@tracehub/bus';
import type { TraceRecord } from '@tracehub/contracts';
import { type Database, getSession, isSessionComplete } from '@tracehub/db';
import { RecordStore } from '@tracehub/storage';
import type { Kysely } from 'kysely';
import { until } from './index.js';
import type { DecodedQsFixture } from './qs-fixture-session.js';

/**
 * Publishes `decoded` (one session's records, as `decodeQsFixture` made them) chunk by chunk and
 * runs a RecordStore on the bus until the session is stored complete. The bus needs its topology.
 */
export async function storeThroughStorage(
  backends: { db: Kysely<Database>; bus: Bus },
  decoded: DecodedQsFixture,
): Promise<void> {
  const { db, bus } = backends;
  const [first] = decoded.records;
  const byChunk = new Map<number, TraceRecord[]>();
  for (const r of decoded.records) byChunk.set(r.chunk, [...(byChunk.get(r.chunk) ?? []), r]);
  for (let chunk = 0; chunk <= decoded.endChunk; chunk++) {
    const records = byChunk.get(chunk) ?? [];
    const eos = chunk === decoded.endChunk;
    if (records.length === 0 && !eos) continue;
    await publishRecordBatch(bus, {
      protocol: first.protocol,
      rig: first.rig,
      link: first.link,
      session: first.session,
      chunk,
      hostNs: records[0]?.hostNs ?? decoded.endNs.toString(),
      eos,
      sessionRecordCount: eos ? decoded.records.length : undefined,
      records,
    });
  }
  const store = new RecordStore({ bus, db, batchRecords: 500, batchMs: 20 });
  await store.start();
  try {
    await until(`storage to store session ${first.session} complete`, async () => {
      const session = await getSession(db, first.session);
      return session !== undefined && isSessionComplete(session);
    });
  } finally {
    await store.stop();
  }
}
