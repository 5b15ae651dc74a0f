import {
  decodeOst,
  decodePhonet,
  encodeOstMarker,
  encodeOstSwd,
  encodeOstTrace,
  encodePhonetException,
  encodePhonetMarker,
  encodePhonetSwd,
  encodePhonetTrace,
  outputTimestamp,
  splitOutputTimestamp,
  TimestampFlag,
} from '@tracehub/stp';
import { describe, expect, it } from 'vitest';

function bytes(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 131 + seed) & 0xff;
  return out;
}

const ts = outputTimestamp(TimestampFlag.DEVICE, 123_456_789_012_345n);

/** `raw` decodes, as a whole, to a PhoNet message of `kind` with these fields (receiver object 0). */
function expectPhonetMessage(raw: Uint8Array, kind: string, fields: object): void {
  expect(decodePhonet(raw)).toEqual({
    status: 'ok',
    size: raw.length,
    message: { kind, receiverObject: 0, ...fields },
  });
}
const MARKER_TYPES = [0x02, 0x03, 0x06, 0x23, 0x26, 0x27];
const EXCEPTION_CODES = [1, 2, 3, 4, 5, 6, 7, 8];

describe('OST codec', () => {
  // Data lengths around the short/extended boundary, and those giving totals of 255, 256 and 0xFFFF.
  for (const len of [0, 1, 240, 241, 244, 245, 255, 256, 65516]) {
    it(`trace message with ${len} data bytes round-trips`, () => {
      const data = bytes(len);
      const raw = encodeOstTrace({ port: 0x0b, master: 0x41, channel: 0x0f, timestamp: ts, data });
      const extended = 11 + len > 255;
      expect(raw.length).toBe((extended ? 8 : 4) + 11 + len);
      expect([raw[0], raw[1], raw[2]]).toEqual([0x10, 0x00, 0x84]);
      if (extended) {
        expect(raw[3]).toBe(0);
        expect(raw[4] | (raw[5] << 8) | (raw[6] << 16) | (raw[7] << 24)).toBe(11 + len);
      } else {
        expect(raw[3]).toBe(11 + len);
      }
      const decoded = decodeOst(raw);
      expect(decoded).toEqual({
        status: 'ok',
        size: raw.length,
        message: { kind: 'trace', port: 0x0b, master: 0x41, channel: 0x0f, timestamp: ts, data },
      });
    });
  }

  it('gives messages of exactly 255, 256 and 0xFFFF bytes', () => {
    const total = (len: number) =>
      encodeOstTrace({ port: 1, master: 2, channel: 3, timestamp: ts, data: bytes(len) }).length;
    expect(total(240)).toBe(255);
    expect(total(241)).toBe(256);
    expect(total(65516)).toBe(0xffff);
    expect(() => total(65517)).toThrow(RangeError);
  });

  for (const type of MARKER_TYPES) {
    it(`marker 0x${type.toString(16)} round-trips (short and extended)`, () => {
      for (const [params, comment] of [
        [new Uint8Array(0), new Uint8Array(0)],
        [Uint8Array.of(0x0f, 0x00, 0x0c), new TextEncoder().encode('Old timestamp!\0')],
        [bytes(40), bytes(300, 7)],
      ]) {
        const raw = encodeOstMarker({ type, sender: 0x0b, timestamp: ts, index: 0x01020304, params, comment });
        expect([raw[0], raw[1], raw[2]]).toEqual([0x10, 0xf0, 0x81]);
        const r = decodeOst(raw);
        expect(r).toEqual({
          status: 'ok',
          size: raw.length,
          message: { kind: 'marker', type, sender: 0x0b, timestamp: ts, index: 0x01020304, params, comment },
        });
      }
    });
  }

  it('SWD wrapper round-trips', () => {
    for (const len of [1, 252, 253, 1000]) {
      const data = bytes(len);
      const raw = encodeOstSwd({ port: 0x0c, processor: 2, data });
      expect(raw[2]).toBe(0x99);
      expect(decodeOst(raw)).toEqual({
        status: 'ok',
        size: raw.length,
        message: { kind: 'swd', port: 0x0c, processor: 2, data },
      });
    }
  });

  it('reports incomplete and invalid input without throwing', () => {
    const raw = encodeOstTrace({ port: 1, master: 2, channel: 3, timestamp: ts, data: bytes(300) });
    for (let cut = 0; cut < raw.length; cut += 37) expect(decodeOst(raw.subarray(0, cut)).status).toBe('incomplete');
    expect(decodeOst(Uint8Array.of(0x11, 0, 0x84, 1, 0)).status).toBe('invalid');
    expect(decodeOst(Uint8Array.of(0x10, 0, 0x77, 1, 0)).status).toBe('invalid');
  });

  it('keeps the timestamp flag in bits 63:60', () => {
    expect(splitOutputTimestamp(ts)).toEqual({ flag: 0b1100, ns: 123_456_789_012_345n });
    expect(splitOutputTimestamp(outputTimestamp(TimestampFlag.FIDO, 5n)).flag).toBe(0b1101);
    expect(splitOutputTimestamp(outputTimestamp(TimestampFlag.APPROXIMATED, 5n)).flag).toBe(0b1110);
  });
});

describe('PhoNet codec', () => {
  for (const len of [0, 1, 235, 236, 255, 256, 65515]) {
    it(`trace message with ${len} data bytes round-trips`, () => {
      const message = { sender: 0x0b, transaction: 200, master: 0x41, channel: 0x0f, timestamp: ts, data: bytes(len) };
      const raw = encodePhonetTrace(message);
      expect(raw.length).toBe(20 + len);
      expect(Array.from(raw.subarray(0, 4))).toEqual([0x1d, 0x10, 0x4c, 0x7c]);
      expect((raw[4] << 8) | raw[5]).toBe(raw.length - 6);
      expect(raw[9]).toBe(0x94);
      expectPhonetMessage(raw, 'trace', message);
    });
  }

  it('gives messages of exactly 255, 256 and 0xFFFF bytes', () => {
    const total = (len: number) =>
      encodePhonetTrace({ sender: 1, transaction: 0, master: 2, channel: 3, timestamp: ts, data: bytes(len) }).length;
    expect(total(235)).toBe(255);
    expect(total(236)).toBe(256);
    expect(total(65515)).toBe(0xffff);
    expect(() => total(65516)).toThrow(RangeError);
  });

  for (const code of EXCEPTION_CODES) {
    it(`exception 0x0${code} round-trips, up to 0xFFFF bytes`, () => {
      for (const len of [0, 1, 234, 235, 65514]) {
        const exception = {
          sender: 0x0b,
          transaction: 7,
          master: 1,
          channel: 2,
          timestamp: ts,
          code,
          data: bytes(len, code),
        };
        const raw = encodePhonetException(exception);
        expect(raw.length).toBe(21 + len);
        expect(raw[9]).toBe(0x95);
        expect(raw[20]).toBe(code);
        expectPhonetMessage(raw, 'exception', exception);
      }
    });
  }

  for (const type of MARKER_TYPES) {
    it(`marker 0x${type.toString(16)} round-trips`, () => {
      const params = type === 0x27 ? Uint8Array.of(0x0f, 0x05, 1, 2, 3, 4, 0x0f) : new Uint8Array(0);
      const comment = type === 0x02 ? new TextEncoder().encode('hello\0') : new Uint8Array(0);
      const marker = { sender: 0x0b, transaction: 255, type, timestamp: ts, index: 42, params, comment };
      const raw = encodePhonetMarker(marker);
      expect(raw[9]).toBe(0xff);
      expect(raw[11]).toBe(0);
      expectPhonetMessage(raw, 'marker', marker);
    });
  }

  it('SWD wrapper round-trips', () => {
    const data = bytes(77);
    const raw = encodePhonetSwd({ sender: 0x0b, transaction: 3, processor: 1, data });
    expect([raw[9], raw[10], raw[11]]).toEqual([0x99, 0x01, 1]);
    expectPhonetMessage(raw, 'swd', { sender: 0x0b, transaction: 3, processor: 1, data });
  });

  it('reports incomplete and invalid input without throwing', () => {
    const raw = encodePhonetTrace({ sender: 1, transaction: 0, master: 2, channel: 3, timestamp: ts, data: bytes(50) });
    for (let cut = 0; cut < raw.length; cut += 7) expect(decodePhonet(raw.subarray(0, cut)).status).toBe('incomplete');
    const bad = raw.slice();
    bad[9] = 0x42;
    expect(decodePhonet(bad).status).toBe('invalid');
  });
});
