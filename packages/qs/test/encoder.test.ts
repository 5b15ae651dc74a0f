import type { DecodedRecord } from '@tracehub/contracts';
import { encodeFrame, QsDecoder, QsDeframer, QsFrameBuilder, QsPayloadWriter, QsRxEncoder } from '@tracehub/qs';
import { qspyLines } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { captureBytes, decodeChunked, textLines } from './helpers.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const spaced = (s: string) => s.replace(/ /g, '').toLowerCase();

/** Splits a capture into its frames' un-escaped bytes (seq, id, payload, checksum). */
function framesOf(bytes: Uint8Array): Uint8Array[] {
  const frames: Uint8Array[] = [];
  const d = new QsDeframer({
    frame: (buf, start, len) => frames.push(buf.slice(start, start + len)),
    frameError: () => {},
  });
  d.push(bytes);
  return frames;
}

describe('frame encoder', () => {
  it('builds the spec examples byte for byte (sections 2.3, 14)', () => {
    expect(hex(encodeFrame(1, 0))).toBe('0100fe7e');
    // ACTIVE_POST of fmt_v32s at offset 1002, checksum 0x4C.
    const post = Uint8Array.from([
      0xb8, 0xe1, 0xb3, 0xb1, 0x40, 0x00, 0x04, 0x60, 0xf4, 0x40, 0x00, 0x00, 0x80, 0x08, 0x08,
    ]);
    expect(hex(encodeFrame(0x40, 0x0e, post))).toBe(spaced('40 0E B8 E1 B3 B1 40 00 04 60 F4 40 00 00 80 08 08 4C 7E'));
    // Seq 0x7D is stuffed (dpp_qv at 2918).
    const gc = Uint8Array.from([0xcd, 0x3d, 0x17, 0x3d, 0x04, 0x00, 0x01, 0x04]);
    expect(hex(encodeFrame(0x7d, 0x1d, gc))).toBe('7d5d1dcd3d173d04000104fe7e');
  });

  it('round-trips every frame of every clean capture through the deframer', () => {
    for (const name of ['dpp_qv', 'fmt_v64', 'fmt_v32s', 'defer', 'dpp_posix']) {
      const frames = framesOf(captureBytes(name));
      const stream = Buffer.concat(frames.map((f) => encodeFrame(f[0], f[1], f.subarray(2, f.length - 1))));
      expect(framesOf(stream).map(hex)).toEqual(frames.map(hex));
      // Re-encoded (strings now stuffed too), the capture still decodes to qspy's lines.
      expect(textLines(decodeChunked(new Uint8Array(stream), [333]))).toEqual(qspyLines(name));
    }
  });

  it('builds a target stream that decodes back to the values written', () => {
    const b = new QsFrameBuilder();
    const info = new QsPayloadWriter()
      .u8(0xff)
      .u16(740)
      .raw([0x22, 0x42, 0x22, 0x44, 0x04, 16, 0x13, 1, 2, 3, 4, 5, 26])
      .toBytes();
    const bytes = Buffer.concat([
      b.frame(0),
      b.frame(64, info),
      b.frame(61, new QsPayloadWriter().uint(0x1234, 4).str('my~obj}').toBytes()),
      b.frame(100, new QsPayloadWriter().u32(77).u8(0x08).str('x').u8(0x31).u8(9).toBytes()),
    ]);
    const out: DecodedRecord[] = [];
    const d = new QsDecoder();
    d.push(new Uint8Array(bytes), { hostNs: 0n }, (r) => out.push(r));
    expect(out.map((r) => r.text).filter((t) => t !== '')).toEqual([
      '           Trg-RST  QP-Ver=740,Build=260504_030201',
      '           Obj-Dict 0x00001234->my~obj}',
      '0000000077 USER+000 x   9',
    ]);
    expect(d.stats()).toMatchObject({ frames: 4, errors: 0, gaps: 0 });
  });
});

describe('QS-RX encoder', () => {
  it('matches the spec examples (section 10.1)', () => {
    const rx = new QsRxEncoder();
    expect(hex(rx.info())).toBe('0100fe7e');
    expect(hex(rx.reset())).toBe('0202fb7e');
    expect(hex(rx.tick(0))).toBe('030300f97e');
    rx.resetSequence();
    expect(rx.info()[0]).toBe(1);
  });

  it('lays every command out as spec 10.2 says', () => {
    const rx = new QsRxEncoder({ objPtrSize: 4, funPtrSize: 4, sigSize: 2 });
    const body = (frame: Uint8Array) => {
      const f = framesOf(frame)[0];
      return { id: f[1], payload: hex(f.subarray(2, f.length - 1)) };
    };
    expect(body(rx.command(7, 1, 2, 3))).toEqual({ id: 1, payload: '07010000000200000003000000' });
    expect(body(rx.peek(0x102, 2, 3))).toEqual({ id: 4, payload: '02010203' });
    expect(body(rx.poke(4, 2, [0xbeef, 0x7e7d]))).toEqual({ id: 5, payload: '04000202efbe7d7e' });
    expect(body(rx.fill(8, 1, 10, 0xaa))).toEqual({ id: 6, payload: '0800010aaa' });
    expect(body(rx.testSetup())).toEqual({ id: 7, payload: '' });
    expect(body(rx.testTeardown())).toEqual({ id: 8, payload: '' });
    expect(body(rx.testProbe(0xdeadbeef, 0x402615))).toEqual({ id: 9, payload: 'efbeadde15264000' });
    expect(body(rx.globalFilter([0, 8, 127]))).toEqual({ id: 10, payload: `100101${'00'.repeat(13)}80` });
    expect(body(rx.localFilter(new Uint8Array(16).fill(0xff)))).toEqual({ id: 11, payload: `10${'ff'.repeat(16)}` });
    expect(body(rx.aoFilter(true, 0x40f460))).toEqual({ id: 12, payload: '0060f44000' });
    expect(body(rx.currentObject(5, 0x40f54c))).toEqual({ id: 13, payload: '054cf54000' });
    expect(body(rx.testContinue())).toEqual({ id: 14, payload: '' });
    expect(body(rx.queryCurrent(4))).toEqual({ id: 15, payload: '04' });
    expect(body(rx.event(255, 4, [1, 2]))).toEqual({ id: 16, payload: 'ff040002000102' });
    expect(rx.seq).toBe(14);
  });
});
