import type { DecodedRecord } from '@tracehub/contracts';
import { decodeOst, frameSwdMessage, StpDecoder, StpStreamWriter, SwdDecoder } from '@tracehub/stp';
import { describe, expect, it } from 'vitest';

const TIME = (1n << 60n) - 1n;

/** The 60-bit time of a record's OST message (its 64-bit timestamp less the flag). */
function timeOf(record: DecodedRecord): bigint {
  const raw = Buffer.from(record.raw);
  const at = (raw[3] === 0 ? 8 : 4) + 3;
  return raw.readBigUInt64BE(at) & TIME;
}

/** ASYNC, VERSION 3, M8, C8, then D32MTS messages with absolute timestamps (8 nibbles each). */
function timedStream(timestamps: number[]): Uint8Array {
  const w = new StpStreamWriter().async().version(3).m8(0x21).c8(0x01);
  for (const ts of timestamps) w.data(4, ts, 'MTS', `8${ts.toString(16).padStart(8, '0')}`);
  return w.bytes();
}

function decode(options: ConstructorParameters<typeof StpDecoder>[0], bytes: Uint8Array, hostNs = 1_000_000_000n) {
  const records: DecodedRecord[] = [];
  const d = new StpDecoder(options);
  d.push(bytes, { hostNs }, (r) => records.push(r));
  return { d, records };
}

describe('the per-link STP clock (tickHz) and time base (timeOffsetNs)', () => {
  it('without FREQ, device ticks are ns; with tickHz they count at that rate', () => {
    const stream = timedStream([1000, 2000]);
    const ns = decode({}, stream).records.filter((r) => r.name === 'STP_MESSAGE');
    expect(timeOf(ns[1]) - timeOf(ns[0])).toBe(1000n);
    const mhz = decode({ tickHz: 1_000_000 }, stream).records.filter((r) => r.name === 'STP_MESSAGE');
    // 1000 ticks of a 1 MHz clock: 1 ms.
    expect(timeOf(mhz[1]) - timeOf(mhz[0])).toBe(1_000_000n);
    expect(timeOf(mhz[0])).toBe(1_000_000_000n);
  });

  it('timeOffsetNs moves every output time by the offset', () => {
    const stream = timedStream([1000, 2000]);
    const base = decode({}, stream).records.filter((r) => r.name === 'STP_MESSAGE');
    const moved = decode({ timeOffsetNs: 5_000_000n }, stream).records.filter((r) => r.name === 'STP_MESSAGE');
    expect(moved.map(timeOf)).toEqual(base.map((r) => timeOf(r) + 5_000_000n));
  });

  it('setTimeBase gives the two timebase markers, "Old timestamp!" then "New timestamp!", and the new base after', () => {
    const { d, records } = decode({}, timedStream([1000]));
    d.setTimeBase(250_000_000n, { hostNs: 2_000_000_000n }, (r) => records.push(r));
    d.push(timedStream([3000]).subarray(0), { hostNs: 3_000_000_000n }, (r) => records.push(r));
    const markers = records.filter((r) => r.kind === 'marker');
    expect(markers.map((m) => [m.fields.code, m.fields.comment, m.fields.index])).toEqual([
      [0x03, 'Old timestamp!', 1],
      [0x03, 'New timestamp!', 2],
    ]);
    expect(markers.map((m) => timeOf(m))).toEqual([2_000_000_000n, 2_250_000_000n]);
    const ost = decodeOst(markers[0].raw);
    expect(ost.status === 'ok' && ost.message.kind === 'marker' && ost.message.sender).toBe(0x01);
  });

  it('mark() places a user marker (0x02) with its comment after the bytes pushed so far', () => {
    const { d, records } = decode({}, timedStream([1000]));
    d.mark({ kind: 'user', comment: 'valve' }, { hostNs: 1_500_000_000n }, (r) => records.push(r));
    expect(records.at(-1)).toMatchObject({ kind: 'marker', type: 0x02, fields: { comment: 'valve', index: 1 } });
    expect(Buffer.from(records.at(-1)!.raw).subarray(-6).toString('latin1')).toBe('valve\0');
  });

  it('a snapshot keeps the time base and the clock rate', () => {
    const { d } = decode({ tickHz: 1_000_000, timeOffsetNs: 7n }, timedStream([1000]));
    const again = StpDecoder.restore(d.snapshot());
    const a: DecodedRecord[] = [];
    const b: DecodedRecord[] = [];
    d.push(timedStream([5000]), { hostNs: 2_000_000_000n }, (r) => a.push(r));
    again.push(timedStream([5000]), { hostNs: 2_000_000_000n }, (r) => b.push(r));
    expect(b).toEqual(a);
  });
});

describe('SWD send framing', () => {
  it('frames a message as the deframer reads it back: escapes, END padding to whole words', () => {
    const data = Uint8Array.of(0x01, 0xc0, 0x7d, 0xc1, 0x02);
    const framed = frameSwdMessage(data);
    expect(Buffer.from(framed).toString('hex')).toBe('c0017de07d5d7de102c1c1c1');
    expect(framed.length % 4).toBe(0);
    const records: DecodedRecord[] = [];
    const d = new SwdDecoder({});
    d.push(framed, { hostNs: 1n }, (r) => records.push(r));
    expect(records.map((r) => r.fields.data)).toEqual(['01c07dc102']);
  });
});
