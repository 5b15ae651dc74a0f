import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder, type QsDecoderOptions, QsStreamSegments } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { captureBytes, decodeChunked, FIXTURE_NAMES, qspyCases, textLines } from './helpers.js';

const ctx = { hostNs: 0n };
const COUNTERS = ['bytes', 'frames', 'records', 'errors', 'gaps', 'lostFrames', 'bytesSkipped'] as const;

/**
 * Decodes `bytes` cut at `cuts` as `tracehub decode` spreads a stream over threads: each
 * segment by a decoder of its own, started from the snapshot QsStreamSegments gives for it.
 */
function decodeInSegments(bytes: Uint8Array, cuts: number[], options: QsDecoderOptions) {
  const segments = new QsStreamSegments(options);
  const bounds = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  const records: DecodedRecord[] = [];
  const totals: Record<string, number> = {};
  for (let i = 0; i + 1 < bounds.length; i++) {
    const segment = bytes.subarray(bounds[i], bounds[i + 1]);
    const decoder = QsStreamSegments.decoderFor(segments.start(segment));
    decoder.push(segment, ctx, (r) => records.push(r));
    if (i + 2 === bounds.length) decoder.end(ctx, (r) => records.push(r));
    for (const [k, v] of Object.entries(decoder.stats())) totals[k] = (totals[k] ?? 0) + v;
  }
  return { records, totals };
}

function wholeStats(bytes: Uint8Array, options: QsDecoderOptions): Record<string, number> {
  const decoder = new QsDecoder(options);
  decoder.push(bytes, ctx, () => {});
  decoder.end(ctx, () => {});
  return decoder.stats();
}

/** Cut points: every `step` bytes from `first`, so that boundaries fall in every kind of place. */
function cutsEvery(length: number, first: number, step: number): number[] {
  const cuts: number[] = [];
  for (let c = first; c < length; c += step) cuts.push(c);
  return cuts;
}

function expectSameCounters(totals: Record<string, number>, whole: Record<string, number>): void {
  for (const k of COUNTERS) expect(totals[k], k).toBe(whole[k]);
}

describe('a QS stream decoded in segments', () => {
  for (const c of qspyCases()) {
    it(`prints what qspy printed for ${c.label}, wherever the segments are cut`, () => {
      const whole = wholeStats(c.bytes, c.options);
      const n = c.bytes.length;
      for (const [first, step] of [
        [1, 97],
        [13, 1021],
        [Math.floor(n / 2), n],
      ]) {
        const { records, totals } = decodeInSegments(c.bytes, cutsEvery(n, first, step), c.options);
        expect(textLines(records)).toEqual(c.lines);
        expectSameCounters(totals, whole);
      }
    });
  }

  it('gives the records of one decoder for random bytes and mutated captures, cut anywhere', () => {
    let seed = 0x2545f491;
    const random = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const sources = FIXTURE_NAMES.map((n) => captureBytes(n));
    for (let round = 0; round < 60; round++) {
      const base = sources[round % sources.length];
      const bytes = round % 3 === 0 ? new Uint8Array(4000) : base.slice(0, 6000);
      // Random bytes, or a capture with bit flips, dropped flags and inserted escapes.
      for (let i = 0; i < bytes.length; i++) {
        if (round % 3 === 0) bytes[i] = random() < 0.1 ? 0x7e : random() < 0.05 ? 0x7d : (random() * 256) | 0;
        else if (random() < 0.004) bytes[i] = random() < 0.5 ? 0x7d : bytes[i] ^ (1 << ((random() * 8) | 0));
      }
      const cuts = Array.from({ length: 1 + ((random() * 40) | 0) }, () => (random() * bytes.length) | 0);
      const whole = decodeChunked(bytes, [bytes.length]);
      const { records, totals } = decodeInSegments(bytes, cuts, {});
      expect(records.map((r) => [r.kind, r.name, r.text])).toEqual(whole.map((r) => [r.kind, r.name, r.text]));
      expectSameCounters(totals, wholeStats(bytes, {}));
    }
  });
});
