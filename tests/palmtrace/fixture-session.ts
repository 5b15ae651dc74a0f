import { readFileSync } from 'node:fs';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { addSessionCounts, type Database, insertRecords, markSessionEnded, upsertSession } from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import { fixturePath } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';

/**
 * Decodes a QS fixture capture as the pipeline would (chunks of 256 bytes, each one host time
 * `stepNs` after the previous) and stores its session row and records in Postgres.
 */
export async function storeQsSession(
  db: Kysely<Database>,
  name: string,
  place: { rig: string; link: string; session: string; startNs: bigint; stepNs: bigint },
): Promise<TraceRecord[]> {
  const bytes = new Uint8Array(readFileSync(fixturePath('qs', `${name}.qs`)));
  const decoder = new QsDecoder();
  const records: TraceRecord[] = [];
  let chunk = 0;
  let hostNs = place.startNs;
  const emit = (r: DecodedRecord) =>
    records.push(toTraceRecord(r, { ...place, seq: records.length, chunk, protocol: 'qs', hostNs }));
  for (let off = 0; off < bytes.length; off += 256, chunk++, hostNs += place.stepNs) {
    decoder.push(bytes.subarray(off, off + 256), { hostNs }, emit);
  }
  decoder.end({ hostNs }, emit);
  await upsertSession(db, {
    id: place.session,
    rig: place.rig,
    link: place.link,
    protocol: 'qs',
    startedAt: new Date(Number(place.startNs / 1_000_000n)),
  });
  for (let i = 0; i < records.length; i += 1000) await insertRecords(db, records.slice(i, i + 1000));
  await addSessionCounts(db, place.session, { records: records.length, lastChunk: chunk });
  await markSessionEnded(db, place.session, new Date(Number(hostNs / 1_000_000n)), chunk);
  return records;
}

/** Lines 8.. of a fixture's qspy output, up to the closing empty line and `QSPY Done`. */
export function qspyLines(name: string): string[] {
  const lines = readFileSync(fixturePath('qs', `${name}.qspy.txt`), 'latin1').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines[lines.length - 1] !== 'QSPY Done' || lines[lines.length - 2] !== '') {
    throw new Error(`${name}.qspy.txt does not end with an empty line and QSPY Done`);
  }
  return lines.slice(7, -2);
}
