import { qspyLines } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import {
  captureBytes,
  decodeChunked,
  FIXTURE_NAMES,
  fixtureOptions,
  QSPY_RUN_NAMES,
  qspyRun,
  textLines,
} from './helpers.js';

describe('QS decoder against qspy 7.4 output', () => {
  it('has fixtures to compare with', () => {
    expect(FIXTURE_NAMES.length).toBeGreaterThanOrEqual(9);
  });

  for (const name of FIXTURE_NAMES) {
    it(`prints exactly what qspy printed for ${name}.qs`, () => {
      const records = decodeChunked(captureBytes(name), [4096], fixtureOptions(name));
      expect(textLines(records)).toEqual(qspyLines(name));
    });
  }

  // Generated streams replayed through qspy 7.4 (test/fixtures): every record id with random
  // payloads (short, long, misread), dictionary hits and misses, target infos of several QS
  // versions, bit flips and garbage between frames.
  for (const name of QSPY_RUN_NAMES) {
    it(`prints exactly what qspy printed for the generated ${name}.qs`, () => {
      const run = qspyRun(name);
      for (const sizes of [[4096], [1, 7, 64]]) {
        expect(textLines(decodeChunked(run.bytes, sizes, run.options))).toEqual(run.lines);
      }
    });
  }
});
