import { qspyLines } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { captureBytes, decodeChunked, FIXTURE_NAMES, textLines } from './helpers.js';

describe('QS decoder against qspy 7.4 output', () => {
  it('has fixtures to compare with', () => {
    expect(FIXTURE_NAMES.length).toBeGreaterThanOrEqual(9);
  });

  for (const name of FIXTURE_NAMES) {
    it(`prints exactly what qspy printed for ${name}.qs`, () => {
      const records = decodeChunked(captureBytes(name), [4096]);
      expect(textLines(records)).toEqual(qspyLines(name));
    });
  }
});
