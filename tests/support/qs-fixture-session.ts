// Real data for API, dashboard and bridge tests: a reference capture decoded and stored.
import { readFileSync } from 'node:fs';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import {
  addSessionCounts,
  type Database,
  insertRecords,
  markSessionEnded,
  setSessionRecordTotal,
  upsertDictionaryEntries,
  upsertLink,
  upsertSession,
} from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import type { Kysely } from 'kysely';
import { fixturePath } from './paths.js';

export interface StoredFixture {
  session: string;
  rig: string;
  link: string;
  linkId: number;
  records: TraceRecord[];
}

/**
 * Decodes a QS fixture capture as the pipeline would (chunks of `chunkBytes`, each chunk one
 * host time `stepNs` after the previous) and stores it: rig, link, session with its counts,
 * records. Real data, from the reference captures.
 */
export async function storeQsFixture(
  db: Kysely<Database>,
  name: string,
  place: { rig: string; link: string; session: string; startNs: bigint; stepNs?: bigint; chunkBytes?: number },
): Promise<StoredFixture> {
  const bytes = new Uint8Array(readFileSync(fixturePath('qs', `${name}.qs`)));
  const decoder = new QsDecoder();
  const records: TraceRecord[] = [];
  const chunkBytes = place.chunkBytes ?? 256;
  const step = place.stepNs ?? 1_000_000n;
  let chunk = 0;
  let hostNs = place.startNs;
  const emit = (r: DecodedRecord) =>
    records.push(
      toTraceRecord(r, {
        rig: place.rig,
        link: place.link,
        session: place.session,
        seq: records.length,
        chunk,
        protocol: 'qs',
        hostNs,
      }),
    );
  for (let off = 0; off < bytes.length; off += chunkBytes, chunk++, hostNs += step) {
    decoder.push(bytes.subarray(off, off + chunkBytes), { hostNs }, emit);
  }
  decoder.end({ hostNs }, emit);
  const linkId = await upsertLink(db, { rig: place.rig, name: place.link, protocol: 'qs' });
  const info = records.find((r) => r.name === 'QS_TARGET_INFO');
  const startedAt = new Date(Number(place.startNs / 1_000_000n));
  await upsertSession(db, {
    id: place.session,
    rig: place.rig,
    link: place.link,
    protocol: 'qs',
    startedAt,
    targetInfo: info ? (info.fields as Record<string, unknown>) : null,
  });
  for (let i = 0; i < records.length; i += 1000) await insertRecords(db, records.slice(i, i + 1000));
  await addSessionCounts(db, place.session, {
    records: records.length,
    errors: records.filter((r) => r.kind === 'error').length,
    gaps: records.filter((r) => r.name === 'SEQ_GAP').length,
    lastChunk: chunk,
    firstHostTime: new Date(Number(BigInt(records[0].hostNs) / 1_000_000n)),
    lastHostTime: new Date(Number(BigInt(records[records.length - 1].hostNs) / 1_000_000n)),
  });
  const objects = records.filter((r) => r.name === 'QS_OBJ_DICT');
  await upsertDictionaryEntries(
    db,
    objects.map((r) => ({
      session: place.session,
      kind: 'obj',
      key: String(r.fields.obj),
      name: String(r.fields.name),
    })),
  );
  await markSessionEnded(db, place.session, new Date(Number(hostNs / 1_000_000n)), chunk);
  await setSessionRecordTotal(db, place.session, records.length);
  return { session: place.session, rig: place.rig, link: place.link, linkId, records };
}
