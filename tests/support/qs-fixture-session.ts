// Real data for API, dashboard and bridge tests: a reference capture decoded and stored.
import { readFileSync } from 'node:fs';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { type Database, markSessionEnded, setSessionRecordTotal } from '@tracehub/db';
import { qsDecoderFactory } from '@tracehub/decoders';
import type { Kysely } from 'kysely';
import { fixturePath } from './paths.js';
import { type SessionPlace, storeRecordBatches, storeSessionStart } from './stored-session.js';

export interface StoredFixture {
  session: string;
  rig: string;
  link: string;
  linkId: number;
  records: TraceRecord[];
}

/** A QS fixture capture decoded as the pipeline decodes it, before it is stored. */
export interface DecodedQsFixture {
  records: TraceRecord[];
  /** The chunk that ends the session (the number of chunks the bytes made), and its host time. */
  endChunk: number;
  endNs: bigint;
  /** The fields of its QS_TARGET_INFO record, if it has one. */
  targetInfo: Record<string, unknown> | null;
}

/**
 * Decodes a QS fixture capture as the pipeline would (the decoder service's codec, target
 * time included; chunks of `chunkBytes`, each chunk one host time `stepNs` after the previous).
 * Real data, from the reference captures (`bytes`: a stream made of them, else the capture `name`).
 */
export function decodeQsFixture(
  name: string,
  place: SessionPlace & { stepNs?: bigint; chunkBytes?: number; bytes?: Uint8Array },
): DecodedQsFixture {
  const bytes = place.bytes ?? new Uint8Array(readFileSync(fixturePath('qs', `${name}.qs`)));
  const decoder = qsDecoderFactory.create({ rig: place.rig, link: place.link, protocol: 'qs' }, {});
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
  const info = records.find((r) => r.name === 'QS_TARGET_INFO');
  return {
    records,
    endChunk: chunk,
    endNs: hostNs,
    targetInfo: info ? (info.fields as Record<string, unknown>) : null,
  };
}

/**
 * A QS fixture capture decoded (`decodeQsFixture`) and stored as storage does: rig, link,
 * session with its counts, records, dictionary entries.
 */
export async function storeQsFixture(
  db: Kysely<Database>,
  name: string,
  place: SessionPlace & { stepNs?: bigint; chunkBytes?: number; bytes?: Uint8Array },
): Promise<StoredFixture> {
  const { records, endChunk, endNs, targetInfo } = decodeQsFixture(name, place);
  const linkId = await storeSessionStart(db, place, 'qs', targetInfo);
  await storeRecordBatches(db, records, 1000);
  await markSessionEnded(db, place.session, new Date(Number(endNs / 1_000_000n)), endChunk);
  await setSessionRecordTotal(db, place.session, records.length);
  return { session: place.session, rig: place.rig, link: place.link, linkId, records };
}
