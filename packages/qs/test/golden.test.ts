import { describe, expect, it } from 'vitest';
import { decodeChunked, FIXTURE_NAMES, qspyCases, textLines } from './helpers.js';

describe('QS decoder against qspy 7.4 and 8.1.3 output', () => {
  it('has fixtures to compare with', () => {
    expect(FIXTURE_NAMES.length).toBeGreaterThanOrEqual(9);
  });

  // The shared captures (QP 7.4 and 8.x targets), and streams generated and replayed through qspy
  // 7.4 or (qs8_*, QP 8.x targets) 8.1.3 (test/fixtures):
  // every record id with random payloads (short, long, misread), dictionary hits and misses,
  // target infos of several QS versions, bit flips and garbage between frames. The generated
  // ones are also cut into tiny chunks.
  for (const c of qspyCases()) {
    it(`prints exactly what qspy printed for ${c.label}`, () => {
      for (const sizes of c.generated ? [[4096], [1, 7, 64]] : [[4096]]) {
        expect(textLines(decodeChunked(c.bytes, sizes, c.options))).toEqual(c.lines);
      }
    });
  }
});
