import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder, QsFrameBuilder, QsPayloadWriter } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { captureBytes, qspyCases } from './helpers.js';

const ctx = { hostNs: 1n };

function targetInfo(reset: boolean, buildSecond: number): Uint8Array {
  return new QsPayloadWriter()
    .u8(reset ? 0xff : 0)
    .u16(740)
    .raw([0x22, 0x42, 0x22, 0x44, 0x04, 16, 0x13, buildSecond, 2, 3, 4, 5, 26])
    .toBytes();
}

describe('QsDecoder', () => {
  it('drops the partial frame and reports the bytes the link lost, then the gap', () => {
    const b = new QsFrameBuilder();
    const frames = [b.frame(0), b.frame(70), b.frame(70), b.frame(70), b.frame(70)];
    const out: DecodedRecord[] = [];
    const d = new QsDecoder();
    const emit = (r: DecodedRecord) => out.push(r);
    d.push(Buffer.concat([frames[0], frames[1], frames[2].subarray(0, 2)]), ctx, emit);
    // frames[2]'s end and all of frames[3] were lost on the way.
    d.push(frames[4], { hostNs: 2n, lostBytes: frames[2].length - 2 + frames[3].length }, emit);
    expect(out.map((r) => r.name)).toEqual([
      'QS_EMPTY',
      'QS_DEFAULT_CONFIG',
      'QS_QF_RUN',
      'LINK_LOST',
      'SEQ_GAP',
      'QS_QF_RUN',
    ]);
    expect(out[3]).toMatchObject({ kind: 'error', fields: { lostBytes: 6, partialBytes: 2 } });
    expect(out[4]).toMatchObject({ text: '   <COMMS> ERROR    Discontinuity Seq=2->5', fields: { lost: 2 } });
    expect(d.stats()).toMatchObject({ gaps: 1, lostFrames: 2, linkLostBytes: 6 });
  });

  it('emits an unfinished frame at end() with empty text (qspy prints nothing for it)', () => {
    const out: DecodedRecord[] = [];
    const d = new QsDecoder();
    d.push(Uint8Array.from([0x01, 0x00, 0xfe, 0x7e, 0x02, 0x46]), ctx, (r) => out.push(r));
    d.end(ctx, (r) => out.push(r));
    expect(out.map((r) => [r.name, r.text, Buffer.from(r.raw).toString('hex')])).toEqual([
      ['QS_EMPTY', '', '0100fe'],
      ['QS_PARTIAL_FRAME', '', '0246'],
    ]);
    // A lone escape byte at the end is reported too.
    const tail: DecodedRecord[] = [];
    const e = new QsDecoder();
    e.push(Uint8Array.from([0x7d]), ctx, (r) => tail.push(r));
    e.end(ctx, (r) => tail.push(r));
    expect(tail).toMatchObject([{ name: 'QS_PARTIAL_FRAME', fields: { bytes: 1 } }]);
  });

  it('says once that it decodes with the default sizes until target info arrives', () => {
    const out: DecodedRecord[] = [];
    new QsDecoder().push(captureBytes('dpp_qv_midstream'), ctx, (r) => out.push(r));
    const notices = out.filter((r) => r.name === 'QS_DEFAULT_CONFIG');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ kind: 'info', text: '', fields: { objPtrSize: 4, timeSize: 4 } });
    // The first record QSPY drops silently is still there, as an error with empty text.
    expect(out[0]).toMatchObject({ kind: 'error', name: 'QS_LEADING_GARBAGE', text: '' });
  });

  it('discards the dictionaries on a target-info mismatch, keeps them on a matching one (Q12)', () => {
    const b = new QsFrameBuilder();
    const obj = new QsPayloadWriter().uint(0x1000, 4).str('thing').toBytes();
    const useObj = new QsPayloadWriter().u32(5).uint(0x1000, 4).u8(0).u8(0).toBytes();
    const bytes = Buffer.concat([
      b.frame(64, targetInfo(true, 1)),
      b.frame(61, obj),
      b.frame(64, targetInfo(false, 1)),
      b.frame(72, useObj),
      b.frame(64, targetInfo(false, 9)),
      b.frame(72, useObj),
    ]);
    const out: DecodedRecord[] = [];
    new QsDecoder().push(new Uint8Array(bytes), ctx, (r) => out.push(r));
    expect(out.map((r) => r.text)).toEqual([
      '           Trg-RST  QP-Ver=740,Build=260504_030201',
      '           Obj-Dict 0x00001000->thing',
      '           Trg-Info QP-Ver=740,Build=260504_030201',
      '0000000005 Sem-Blk  thing,Thr=0,Cnt=0',
      '           Trg-Info QP-Ver=740,Build=260504_030209\n   <QSPY-> Target info mismatch (dictionaries discarded)',
      '0000000005 Sem-Blk  0x00001000,Thr=0,Cnt=0',
    ]);
    expect(out[4].fields).toMatchObject({ mismatch: true, reset: false });
  });

  it('names signals by the signal dictionary as it is now: after new entries, a replaced name and a reset', () => {
    const b = new QsFrameBuilder();
    // DISPATCH (8): time, signal, object, state (4-byte pointers, 2-byte signals from the target info).
    const dispatch = (sig: number, obj: number) =>
      b.frame(8, new QsPayloadWriter().u32(7).u16(sig).uint(obj, 4).uint(0x2000, 4).toBytes());
    const sigDict = (sig: number, obj: number, name: string) =>
      b.frame(60, new QsPayloadWriter().u16(sig).uint(obj, 4).str(name).toBytes());
    const bytes = Buffer.concat([
      b.frame(64, targetInfo(true, 1)),
      dispatch(5, 0x1000),
      dispatch(6, 0x1000),
      sigDict(5, 0, 'PING_SIG'),
      dispatch(5, 0x1000),
      dispatch(6, 0x1000),
      sigDict(6, 0x1000, 'PONG_SIG'),
      dispatch(6, 0x1000),
      dispatch(6, 0x3000),
      sigDict(5, 0, 'PING2_SIG'),
      dispatch(5, 0x1000),
      b.frame(64, targetInfo(true, 1)),
      dispatch(5, 0x1000),
    ]);
    const out: DecodedRecord[] = [];
    new QsDecoder().push(new Uint8Array(bytes), ctx, (r) => out.push(r));
    const dispatches = out.filter((r) => r.name === 'QS_QEP_DISPATCH');
    // Unknown signals are `%08d,Obj=0x%08X` in the text and the number in the fields (spec 7.3).
    expect(dispatches.map((r) => /Sig=(.*),State=/.exec(r.text)?.[1])).toEqual([
      '00000005,Obj=0x00001000',
      '00000006,Obj=0x00001000',
      'PING_SIG',
      '00000006,Obj=0x00001000',
      'PONG_SIG',
      '00000006,Obj=0x00003000',
      'PING2_SIG',
      '00000005,Obj=0x00001000',
    ]);
    expect(dispatches.map((r) => (r.fields as { sig: string }).sig)).toEqual([
      '5',
      '6',
      'PING_SIG',
      '6',
      'PONG_SIG',
      '6',
      'PING2_SIG',
      '5',
    ]);
  });

  it('gives the correct values in the fields where qspy text has quirks (Q3, Q7, Q11)', () => {
    const out: DecodedRecord[] = [];
    new QsDecoder().push(captureBytes('fmt_v64'), ctx, (r) => out.push(r));
    const rearm = out.find((r) => r.name === 'QS_QF_TIMEEVT_REARM');
    expect(rearm?.text).toContain('TE1-Rarm');
    expect(rearm?.fields).toMatchObject({ rate: 0, wasArmed: true });
    const probe = out.find((r) => r.name === 'QS_TEST_PROBE_GET');
    expect(probe?.fields).toMatchObject({ data: 0xdeadbeef });
    const preempt = out.find((r) => r.name === 'QS_SCHED_PREEMPT');
    expect(preempt?.text).toContain('Pri=2->5');
    expect(preempt?.fields).toMatchObject({ prio: 5, prevPrio: 2 });
    const ptrs = out.find((r) => r.name === 'APP_PTRS');
    if (ptrs === undefined) throw new Error('no APP_PTRS record');
    // The unknown function is a 64-bit address: qspy shows 8 digits (Q2), the fields all 16.
    expect(ptrs.text).toContain(' 0x004015A7 ');
    expect((ptrs.fields as { values: unknown[] }).values[4]).toBe('0x00000000004015A7');
  });

  it('decodes text only with the same text, kind and name, and no raw bytes, timestamps, fields or addressing', () => {
    for (const c of qspyCases()) {
      const full: DecodedRecord[] = [];
      const textOnly: DecodedRecord[] = [];
      new QsDecoder(c.options).push(c.bytes, ctx, (r) => full.push(r));
      const decoder = new QsDecoder(c.options);
      decoder.textOnly = true;
      decoder.push(c.bytes, ctx, (r) => textOnly.push(r));
      const framed = textOnly.filter((r) => r.kind !== 'error' && r.name !== 'QS_DEFAULT_CONFIG');
      expect(
        framed.every((r) => r.raw.length === 0 && r.targetTs === null),
        c.label,
      ).toBe(true);
      const visible = (r: DecodedRecord) => [r.kind, r.type, r.name, r.text];
      expect(textOnly.map(visible), c.label).toEqual(full.map(visible));
      // The records with fields of their own (user elements, objects, signals) have none, and none has `qs`.
      expect(
        textOnly.every((r) => r.qs === undefined),
        c.label,
      ).toBe(true);
      const hasFields = full.map((r) => r.qs !== undefined || ('types' in r.fields && 'values' in r.fields));
      expect(
        hasFields.some((has) => has),
        c.label,
      ).toBe(true);
      expect(
        textOnly.filter((_, i) => hasFields[i]).every((r) => Object.keys(r.fields).length === 0),
        c.label,
      ).toBe(true);
    }
  });
});
