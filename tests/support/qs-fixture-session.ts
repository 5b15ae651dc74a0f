// Real data for API, dashboard and bridge tests: a reference capture decoded and stored.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import {
  addSessionCounts,
  type Database,
  insertRecordsJson,
  markSessionEnded,
  setSessionRecordTotal,
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
 * host time `stepNs` after the previous) and stores it as storage does: rig, link, session
 * with its counts, records, dictionary entries. Real data, from the reference captures.
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
  for (let i = 0; i < records.length; i += 1000) {
    const { sessions } = await insertRecordsJson(db, Buffer.from(JSON.stringify(records.slice(i, i + 1000))));
    for (const { session, counts } of sessions) await addSessionCounts(db, session, counts);
  }
  await markSessionEnded(db, place.session, new Date(Number(hostNs / 1_000_000n)), chunk);
  await setSessionRecordTotal(db, place.session, records.length);
  return { session: place.session, rig: place.rig, link: place.link, linkId, records };
}

/**
 * Like `storeQsFixture`, for captures too big to hold decoded: any QS file (gzipped when it
 * ends in .gz), decoded chunk by chunk and stored 5 000 records at a time. Returns the count.
 */
export async function storeQsCapture(
  db: Kysely<Database>,
  file: string,
  place: { rig: string; link: string; session: string; startNs: bigint; stepNs?: bigint; chunkBytes?: number },
): Promise<number> {
  let bytes = new Uint8Array(readFileSync(file));
  if (file.endsWith('.gz')) bytes = new Uint8Array(gunzipSync(bytes));
  const decoder = new QsDecoder();
  const chunkBytes = place.chunkBytes ?? 256;
  const step = place.stepNs ?? 1_000_000n;
  let batch: TraceRecord[] = [];
  let count = 0;
  let chunk = 0;
  let hostNs = place.startNs;
  let info: Record<string, unknown> | null = null;
  const emit = (r: DecodedRecord) => {
    const record = toTraceRecord(r, {
      rig: place.rig,
      link: place.link,
      session: place.session,
      seq: count++,
      chunk,
      protocol: 'qs',
      hostNs,
    });
    if (record.name === 'QS_TARGET_INFO' && info === null) info = record.fields as Record<string, unknown>;
    batch.push(record);
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const { sessions } = await insertRecordsJson(db, Buffer.from(JSON.stringify(batch)));
    for (const { session, counts } of sessions) await addSessionCounts(db, session, counts);
    batch = [];
  };
  await upsertLink(db, { rig: place.rig, name: place.link, protocol: 'qs' });
  await upsertSession(db, {
    id: place.session,
    rig: place.rig,
    link: place.link,
    protocol: 'qs',
    startedAt: new Date(Number(place.startNs / 1_000_000n)),
  });
  for (let off = 0; off < bytes.length; off += chunkBytes, chunk++, hostNs += step) {
    decoder.push(bytes.subarray(off, off + chunkBytes), { hostNs }, emit);
    if (batch.length >= 5000) await flush();
  }
  decoder.end({ hostNs }, emit);
  await flush();
  await markSessionEnded(db, place.session, new Date(Number(hostNs / 1_000_000n)), chunk);
  await setSessionRecordTotal(db, place.session, count);
  return count;
}
