import { seededRandom } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { type DecodeRun, decodeVector, loadVectors, withoutAtNibble } from './vectors.js';

const vectors = loadVectors();

/** The whole output of a run as one string (fast to compare, even for 65 KB messages). */
function comparable(run: DecodeRun): string {
  return JSON.stringify({ events: run.events, packets: run.packets, records: run.records }, (_key, value) =>
    typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? Buffer.from(value).toString('hex') : value,
  );
}

describe('chunking and snapshots', () => {
  for (const v of vectors) {
    const big = v.bytes.length > 20000;
    it(`${v.name}: same output for any chunking`, () => {
      for (const output of ['ost', 'phonet'] as const) {
        const whole = decodeVector(v, output, 1 << 20);
        expect(withoutAtNibble(whole.events)).toEqual(withoutAtNibble(v.expected[output]));
        const reference = comparable(whole);
        const sizes = big ? [1, 4093] : [1, 2, 3, 5, 7, 16, 64, 4096];
        for (const size of sizes) {
          expect(comparable(decodeVector(v, output, size)), `chunk size ${size}`).toEqual(reference);
        }
        const random = seededRandom(v.bytes.length * 31 + output.length);
        const cut = () => 1 + Math.floor(random() * (big ? 4096 : 9));
        expect(comparable(decodeVector(v, output, cut)), 'random chunks').toEqual(reference);
      }
    });

    it(`${v.name}: same output across snapshot, JSON and restore before every chunk`, () => {
      for (const output of ['ost', 'phonet'] as const) {
        const reference = comparable(decodeVector(v, output, 1 << 20));
        const size = big ? 3001 : 1;
        const restored = comparable(decodeVector(v, output, size, { restoreEveryChunk: true }));
        expect(restored).toEqual(reference);
      }
    });
  }
});
