import { type DecodedRecord, jsonSafe } from '@tracehub/contracts';
import { QsDecoder } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { captureBytes, decodeChunked, FIXTURE_NAMES } from './helpers.js';

/** Everything the records carry, as one string (bigints and bytes made JSON-safe). */
function comparable(records: DecodedRecord[]): string {
  return JSON.stringify(jsonSafe(records));
}

/** A small deterministic generator, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

describe('chunking invariance', () => {
  for (const name of FIXTURE_NAMES) {
    it(`decodes ${name}.qs identically whatever the chunk sizes`, () => {
      const bytes = captureBytes(name);
      const whole = comparable(decodeChunked(bytes, [bytes.length]));
      const rnd = lcg(name.length * 7919);
      const random = Array.from({ length: 64 }, () => 1 + Math.floor(rnd() * 300));
      for (const sizes of [[1], [2], [3], [7], [64], [4096], random]) {
        expect(comparable(decodeChunked(bytes, sizes))).toBe(whole);
      }
    });
  }
});

describe('snapshot and restore', () => {
  const ctx = { hostNs: 0n };
  for (const name of FIXTURE_NAMES) {
    it(`continues ${name}.qs identically from a JSON snapshot taken mid-stream`, () => {
      const bytes = captureBytes(name);
      const whole = comparable(decodeChunked(bytes, [977]));
      // Half-way, and points inside a frame, right after a flag and right after an escape byte.
      const cuts = [bytes.length >> 1, 5, bytes.indexOf(0x7e) + 1, bytes.indexOf(0x7d) + 1, bytes.length - 3];
      for (const cut of cuts) {
        const out: DecodedRecord[] = [];
        const emit = (r: DecodedRecord) => out.push(r);
        const first = new QsDecoder();
        first.push(bytes.subarray(0, cut), ctx, emit);
        const json = JSON.parse(JSON.stringify(first.snapshot()));
        const second = QsDecoder.restore(json);
        second.push(bytes.subarray(cut), ctx, emit);
        second.end(ctx, emit);
        expect(comparable(out)).toBe(whole);
        expect(second.stats()).toEqual(decoderStats(bytes));
      }
    });
  }

  function decoderStats(bytes: Uint8Array) {
    const d = new QsDecoder();
    d.push(bytes, ctx, () => {});
    d.end(ctx, () => {});
    return d.stats();
  }
});
