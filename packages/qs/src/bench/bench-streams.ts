import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { DecodedRecord } from '@tracehub/contracts';

// The streams the QS benches decode, and what they count of the records.

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const shared = process.env.TRACEHUB_SHARED ?? resolve(repo, '..', 'shared');

/** shared/bench/qs/big_stress.qs.gz unpacked (37 MB): the capture qspy's own rate was measured on. */
export function bigStress(): Uint8Array {
  return gunzipSync(readFileSync(resolve(shared, 'bench', 'qs', 'big_stress.qs.gz')));
}

/** The captures of shared/fixtures/qs one after the other, as one buffer. */
export function fixtureCaptures(): Uint8Array {
  const dir = resolve(shared, 'fixtures', 'qs');
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.qs'))
    .sort();
  return new Uint8Array(Buffer.concat(names.map((f) => readFileSync(resolve(dir, f)))));
}

/** Counts the records given to `emit` and the characters of their text (which reads every text). */
export class RecordTally {
  records = 0;
  textChars = 0;
  readonly emit = (r: DecodedRecord): void => {
    this.records++;
    this.textChars += r.text.length;
  };
}
