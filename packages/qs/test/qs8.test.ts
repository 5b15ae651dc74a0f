import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder, QsFrameBuilder, QsPayloadWriter } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';

const ctx = { hostNs: 1n };

/** The 13 configuration and build bytes of spec 4.1's example (dpp_qv: 8-byte pointers, 4-byte time). */
const CONFIG_BYTES = [0x22, 0x42, 0x22, 0x88, 0x04, 0x40, 0x13, 0x21, 0x2b, 0x00, 0x16, 0x0b, 0x1a];

/** Target info in the QP 8.x layout of spec 12: flags, bit-inverted u32, the 13 bytes. */
function targetInfo8x(
  flags: { reset: boolean; bigEndian?: boolean; framework: number },
  version: number,
  date: number,
) {
  const first = 0x02 | (flags.framework << 2) | (flags.reset ? 0x40 : 0) | (flags.bigEndian ? 0x80 : 0);
  return new QsPayloadWriter()
    .u8(first)
    .u32(~(date * 10000 + version) >>> 0)
    .raw(CONFIG_BYTES)
    .toBytes();
}

/** Record 81 / 10 payload with 8-byte pointers: T, O(ao), O(queue), S, pool, ref. */
function deferPayload(t: number, ao: number, queue: number, sig: number): Uint8Array {
  return new QsPayloadWriter().u32(t).uint(ao, 8).uint(queue, 8).u16(sig).u8(1).u8(2).toBytes();
}

function decode(frames: Uint8Array[]): DecodedRecord[] {
  const out: DecodedRecord[] = [];
  const d = new QsDecoder();
  d.push(Buffer.concat(frames), ctx, (r) => out.push(r));
  return out;
}

describe('QS 8.x targets (spec 12)', () => {
  it('reads the 8.x target-info layout: reset and endianness flags, framework, version and date', () => {
    const b = new QsFrameBuilder();
    const [info] = decode([b.frame(64, targetInfo8x({ reset: true, framework: 1 }, 813, 2503))]);
    expect(info).toMatchObject({
      kind: 'info',
      name: 'QS_TARGET_INFO',
      text: '           Trg-RST  QP-Ver=813,Build=261122_004333',
      fields: {
        reset: true,
        version: 813,
        bigEndian: false,
        framework: 1,
        releaseDate: 2503,
        objPtrSize: 8,
        funPtrSize: 8,
        timeSize: 4,
        sigSize: 2,
        queueCtrSize: 2,
        teCtrSize: 4,
        maxActive: 64,
      },
    });
    const [info2] = decode([b.frame(64, targetInfo8x({ reset: false, bigEndian: true, framework: 0 }, 800, 2412))]);
    expect(info2).toMatchObject({
      text: '           Trg-Info QP-Ver=800,Build=261122_004333',
      fields: { reset: false, bigEndian: true, version: 800, releaseDate: 2412 },
    });
  });

  it('decodes the following records with the sizes the 8.x target info announced', () => {
    const b = new QsFrameBuilder();
    const out = decode([
      b.frame(64, targetInfo8x({ reset: true, framework: 1 }, 813, 2503)),
      b.frame(61, new QsPayloadWriter().uint(0x40e1a0, 8).str('l_ao').toBytes()),
      b.frame(10, deferPayload(7, 0x40e1a0, 0x40e1e8, 4)),
    ]);
    expect(out[2].text).toBe(
      '0000000007 AO-Defer Obj=l_ao,Que=0x0040E1E8,Evt<Sig=00000004,Obj=0x0040E1A0,Pool=1,Ref=2>',
    );
  });

  it('decodes record 81 as QS_QF_ACTIVE_DEFER_ATTEMPT (AO-DefrA) from an 8.x target', () => {
    const b = new QsFrameBuilder();
    const out = decode([
      b.frame(64, targetInfo8x({ reset: true, framework: 1 }, 813, 2503)),
      b.frame(61, new QsPayloadWriter().uint(0x40e1a0, 8).str('l_ao').toBytes()),
      b.frame(61, new QsPayloadWriter().uint(0x40e1e8, 8).str('l_ao.eq').toBytes()),
      b.frame(81, deferPayload(1234, 0x40e1a0, 0x40e1e8, 4)),
      b.frame(81, new Uint8Array(3)),
    ]);
    expect(out[3]).toMatchObject({
      kind: 'record',
      type: 81,
      name: 'QS_QF_ACTIVE_DEFER_ATTEMPT',
      text: '0000001234 AO-DefrA Obj=l_ao,Que=l_ao.eq,Evt<Sig=00000004,Obj=0x0040E1A0,Pool=1,Ref=2>',
      fields: { obj: 'l_ao', queue: 'l_ao.eq', sig: '4', pool: 1, ref: 2 },
      qs: { obj: 'l_ao', sig: '4' },
    });
    // A short one is a length error that names the 8.x record.
    expect(out[4].text).toMatch(/bytes needed in Rec=QS_QF_ACTIVE_DEFER_ATTEMPT$/);
  });

  it('keeps record 81 reserved for a 7.x target, as qspy 7.4 does', () => {
    const b = new QsFrameBuilder();
    const info7 = new QsPayloadWriter().u8(0xff).u16(740).raw(CONFIG_BYTES).toBytes();
    const out = decode([b.frame(64, info7), b.frame(81, deferPayload(1, 2, 3, 4))]);
    expect(out[1]).toMatchObject({ name: 'QS_RESERVED', text: '           Unknown Rec=81,Len=24' });
  });
});
