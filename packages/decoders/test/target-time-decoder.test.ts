import { readFileSync } from 'node:fs';
import { type DecodedRecord, type JsonValue, TargetClock } from '@tracehub/contracts';
import { QsDecoder } from '@tracehub/qs';
import { fixturePath } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { qsDecoderFactory, stpDecoderFactory } from '../src/index.js';

const link = { protocol: 'qs' as const, rig: 'r', link: 'l' };
const capture = new Uint8Array(readFileSync(fixturePath('qs', 'fmt_v32s.qs')));
/** The capture twice: a target that reset and ran again (the second copy begins with the reset target info). */
const twice = new Uint8Array([...capture, ...capture]);

const times = (records: DecodedRecord[]) => records.map((r) => [r.targetSegment, r.targetTime]);

function decodeWhole(bytes: Uint8Array): DecodedRecord[] {
  const records: DecodedRecord[] = [];
  const decoder = qsDecoderFactory.create(link, {});
  decoder.push(bytes, { hostNs: 0n }, (r) => records.push(r));
  decoder.end({ hostNs: 0n }, (r) => records.push(r));
  return records;
}

describe('TargetClock', () => {
  it('adds a period at each wrap of its width, none at 64 bits, and a segment only after a stamp', () => {
    const clock = new TargetClock(16);
    clock.reset();
    expect(clock.segment).toBe(0);
    expect(clock.timeOf(null)).toBeNull();
    expect([0xfff0n, 0x0010n, 0x0005n, null].map((t) => clock.timeOf(t))).toEqual([
      0xfff0n,
      0x10010n,
      0x20005n,
      0x20005n,
    ]);
    clock.reset();
    expect(clock.segment).toBe(1);
    expect(clock.timeOf(null)).toBeNull();
    clock.setWidth(64);
    expect([5n, 3n].map((t) => clock.timeOf(t))).toEqual([5n, 3n]);
    expect(TargetClock.fromJSON(clock.toJSON()).toJSON()).toEqual(clock.toJSON());
  });
});

describe('TargetTimeDecoder', () => {
  it('continues the clock identically from a snapshot taken anywhere', () => {
    const whole = decodeWhole(twice);
    expect(new Set(whole.map((r) => r.targetSegment))).toEqual(new Set([0, 1]));
    for (const cut of [1000, capture.length - 7, capture.length + 2500]) {
      const records: DecodedRecord[] = [];
      const first = qsDecoderFactory.create(link, {});
      first.push(twice.subarray(0, cut), { hostNs: 0n }, (r) => records.push(r));
      const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as JsonValue;
      const second = qsDecoderFactory.restore(link, {}, snapshot);
      second.push(twice.subarray(cut), { hostNs: 0n }, (r) => records.push(r));
      second.end({ hostNs: 0n }, (r) => records.push(r));
      expect(times(records)).toEqual(times(whole));
    }
  });

  it("restores a codec's snapshot written before target times were kept, with a fresh clock", () => {
    const codec = new QsDecoder();
    codec.push(capture.subarray(0, 2000), { hostNs: 0n }, () => {});
    const restored = qsDecoderFactory.restore(link, {}, codec.snapshot());
    const records: DecodedRecord[] = [];
    restored.push(capture.subarray(2000), { hostNs: 0n }, (r) => records.push(r));
    const stamped = records.find((r) => r.targetTs !== null) as DecodedRecord;
    expect(stamped.targetTime).toBe(stamped.targetTs);
    expect(stamped.targetSegment).toBe(0);
  });

  it("starts a link's next session on a fresh clock, with the codec's names kept", () => {
    const first = qsDecoderFactory.create(link, {});
    first.push(capture, { hostNs: 0n }, () => {});
    const next = qsDecoderFactory.continueFrom?.(link, {}, first.snapshot());
    const records: DecodedRecord[] = [];
    next?.push(capture, { hostNs: 0n }, (r) => records.push(r));
    expect(times(records)).toEqual(times(decodeWhole(capture)));
  });

  it('gives STP records their STM timestamps as target time', () => {
    const decoder = stpDecoderFactory.create({ protocol: 'stp', rig: 'r', link: 'stm' }, {});
    const records: DecodedRecord[] = [];
    decoder.push(new Uint8Array(readFileSync(fixturePath('stp', 'coresight_issue27.stp'))), { hostNs: 0n }, (r) =>
      records.push(r),
    );
    const stamped = records.filter((r) => r.targetTs !== null);
    expect(stamped.length).toBeGreaterThan(0);
    for (const r of stamped) expect(r.targetTime).toBe(r.targetTs);
  });
});
