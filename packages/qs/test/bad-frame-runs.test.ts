import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { decodeChunked, qspyRun, textLines } from './helpers.js';

describe('runs of bad frames (issue 14 item 8)', () => {
  // flag_runs.qs: 5000 flags, junk, 200 flags, then dpp_qv's first frames, 3000 stray flags,
  // junk, 40 flags, and the rest of dpp_qv; flag_runs.qspy.txt is qspy 7.4's output for it.
  const run = qspyRun('flag_runs');

  for (const sizes of [[1 << 20], [4096], [1, 3, 64]]) {
    it(`make one record per run, cut into chunks of ${sizes.join(',')} bytes, and qspy's text stays the same`, () => {
      const records = decodeChunked(run.bytes, sizes, run.options);
      expect(textLines(records)).toEqual(run.lines);
      const leading = records.filter((r) => r.name === 'QS_LEADING_GARBAGE');
      expect(leading).toHaveLength(1);
      expect(leading[0]).toMatchObject({ kind: 'error', text: '', fields: { frames: 5201, bytes: 5206 } });
      expect(leading[0].raw.length).toBeLessThanOrEqual(512);
      // 3000 + 40 stray flags and the junk between them: qspy prints a line for each.
      const bad = records.filter((r) => r.name === 'QS_BAD_CHECKSUM');
      const lines = bad.reduce((n, r) => n + r.text.split('\n').length, 0);
      expect(lines).toBe(run.lines.filter((l) => l.includes('Bad checksum')).length);
      expect(bad.length).toBeLessThanOrEqual(6);
      expect(
        bad.every(
          (r) =>
            (r.fields as { frames?: number }).frames === undefined ||
            r.text.split('\n').length === (r.fields as { frames: number }).frames,
        ),
      ).toBe(true);
    });
  }

  it('keeps a run open across a snapshot', () => {
    const half = 2500;
    const out: DecodedRecord[] = [];
    const emit = (r: DecodedRecord) => out.push(r);
    const first = new QsDecoder();
    first.push(run.bytes.subarray(0, half), { hostNs: 0n }, emit);
    expect(out).toHaveLength(0);
    const second = QsDecoder.restore(JSON.parse(JSON.stringify(first.snapshot())));
    second.push(run.bytes.subarray(half), { hostNs: 0n }, emit);
    second.end({ hostNs: 0n }, emit);
    expect(textLines(out)).toEqual(run.lines);
    expect(out.filter((r) => r.name === 'QS_LEADING_GARBAGE')).toHaveLength(1);
  });

  it('100 kB of flags cost a hundred records, not a hundred thousand', () => {
    const bytes = new Uint8Array(100_000).fill(0x7e);
    bytes.set([0x01, 0x00, 0xfe, 0x7e], 50_000); // one good frame (QS_EMPTY) in the middle
    const records = decodeChunked(bytes, [4096]);
    expect(records.length).toBeLessThan(60);
    const stray = records.filter((r) => r.name === 'QS_BAD_CHECKSUM');
    expect(stray.reduce((n, r) => n + (r.fields as { frames: number }).frames, 0)).toBe(49_996);
  });
});
