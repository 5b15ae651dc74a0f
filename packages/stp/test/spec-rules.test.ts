import type { DecodedRecord } from '@tracehub/contracts';
import {
  capturePieces,
  decodeOst,
  decodePhonet,
  StpDecoder,
  type StpDecoderOptions,
  type StpEvent,
  StpStreamWriter,
  splitOutputTimestamp,
} from '@tracehub/stp';
import { describe, expect, it } from 'vitest';

/** Expected values below are worked out by hand from the spec (§4–§8, §11), not from the decoder. */
function decode(stream: Uint8Array, options: StpDecoderOptions = {}, pauses: [number, number][] = []) {
  const events: StpEvent[] = [];
  const records: DecodedRecord[] = [];
  const decoder = new StpDecoder({ ...options, onEvent: (e) => events.push(e) });
  const emit = (r: DecodedRecord) => records.push(r);
  let at = 0;
  let ns = 1_000_000_000n;
  for (const [byte, ms] of pauses) {
    decoder.push(stream.subarray(at, byte), { hostNs: ns }, emit);
    ns += BigInt(ms * 1_000_000);
    at = byte;
  }
  decoder.push(stream.subarray(at), { hostNs: ns }, emit);
  decoder.end({ hostNs: ns }, emit);
  return { events: events.map(({ at_nibble: _, ...e }) => e), records };
}

const msg = (master: number, channel: number, closed_by: string, data: string, extra: object = {}) => ({
  kind: 'message',
  master,
  channel,
  closed_by,
  len: data.length / 2,
  data,
  ...extra,
});

describe('STP v2 synchronisation', () => {
  it('synchronises on 22 NULLs followed by VERSION', () => {
    const w = new StpStreamWriter().data(1, 0x99, 'M').seq('0'.repeat(22)).version(3).m8(5).data(1, 0x11, 'M');
    expect(decode(w.bytes()).events).toEqual([msg(5, 0, 'M', '11')]);
  });

  it('does not synchronise on 21 NULLs', () => {
    const w = new StpStreamWriter().seq('0'.repeat(21)).version(3).m8(5).data(1, 0x11, 'M');
    expect(decode(w.bytes()).events).toEqual([]);
  });

  it('treats ASYNC not followed by VERSION as illegal, with the parameters of the packet that came instead', () => {
    const w = new StpStreamWriter().async().m8(1).data(1, 0x22, 'M').async().version(3).m8(7).data(1, 0x33, 'M');
    expect(decode(w.bytes()).events).toEqual([
      { kind: 'marker', code: 0x27, name: 'TB_ERROR_RESERVED_STP_PACKET', params: '01' },
      msg(7, 0, 'M', '33'),
    ]);
  });

  it('treats VERSION 0 as illegal (parameters 0F 00 00 00)', () => {
    const w = new StpStreamWriter().async().version(0).m8(1).data(1, 0x22, 'M');
    expect(decode(w.bytes()).events).toEqual([
      { kind: 'marker', code: 0x27, name: 'TB_ERROR_RESERVED_STP_PACKET', params: '0f000000' },
    ]);
  });

  it('accepts a synchronised ASYNC of exactly 21 F, and flags 22 F as a bad ASYNC', () => {
    const ok = new StpStreamWriter().async().version(3).m8(1).data(1, 1).async(21).version(3).m8(1).data(1, 2, 'M');
    expect(decode(ok.bytes()).events).toEqual([msg(1, 0, 'M', '0102')]);
    const bad = new StpStreamWriter().async().version(3).m8(1).data(1, 1).async(22).version(3).m8(1).data(1, 2, 'M');
    const { events } = decode(bad.bytes(), { output: 'phonet' });
    expect(events[0]).toEqual({
      kind: 'exception',
      code: 4,
      name: 'TB_EXCEPTION_UNFINISHED_MESSAGE',
      master: 1,
      channel: 0,
      len: 1,
      data: '01',
    });
    expect(events[1]).toEqual({
      kind: 'marker',
      code: 0x27,
      name: 'TB_ERROR_RESERVED_STP_PACKET',
      params: '0f'.repeat(22),
    });
    // The over-long run still ends as an ASYNC, so the stream resynchronises at once.
    expect(events[2]).toEqual(msg(1, 0, 'M', '02'));
  });
});

describe('STP v2 addressing and timestamps', () => {
  it('M8 keeps master[15:8], C8 keeps channel[15:8], a master packet resets the channel', () => {
    const w = new StpStreamWriter().async().version(3).m16(0x1234).c16(0xabcd).m8(0x56).data(1, 1, 'M');
    w.c16(0xabcd).c8(0xef).data(1, 2, 'M');
    expect(decode(w.bytes()).events).toEqual([msg(0x1256, 0, 'M', '01'), msg(0x1256, 0xabef, 'M', '02')]);
  });

  it('VERSION 4 timestamps are Gray coded', () => {
    // gray(0) = 0; low byte <- 0x05; ungray(0b101) = 0b110. Then gray(6) = 5; low nibble <- 3; ungray(3) = 2.
    const w = new StpStreamWriter().async().version(4).m8(1).data(1, 0xaa, 'MTS', '205').data(1, 0xbb, 'MTS', '13');
    expect(decode(w.bytes()).events).toEqual([
      msg(1, 0, 'MTS', 'aa', { closing_ts: '0x0000000000000006' }),
      msg(1, 0, 'MTS', 'bb', { closing_ts: '0x0000000000000002' }),
    ]);
  });

  it('VERSION 2 timestamps are deltas added to the running timestamp', () => {
    const w = new StpStreamWriter().async().version(2).m8(1).data(1, 0xaa, 'MTS', '210').data(1, 0xbb, 'MTS', '15');
    expect(decode(w.bytes()).events).toEqual([
      msg(1, 0, 'MTS', 'aa', { closing_ts: '0x0000000000000010' }),
      msg(1, 0, 'MTS', 'bb', { closing_ts: '0x0000000000000015' }),
    ]);
  });

  it('a D4 payload is one byte 0x0N; little-endian masters get each word reversed', () => {
    const w = new StpStreamWriter().async().version(3).m8(0x21).data(0.5, 0xc).data(2, 0x0102).data(4, 0x03040506);
    w.data(8, 0x0708090a0b0c0d0en, 'M');
    expect(decode(w.bytes(), { littleEndianMasters: [0x21] }).events).toEqual([
      msg(0x21, 0, 'M', '0c0201060504030e0d0c0b0a090807'),
    ]);
  });

  it('GERR closes every open buffer in creation order (PhoNet: 0x05 each, then one 0x08)', () => {
    const w = new StpStreamWriter().async().version(3).m8(2).data(1, 0x20).m8(1).data(1, 0x10).gerr(0x99);
    expect(decode(w.bytes(), { output: 'phonet' }).events).toEqual([
      { kind: 'exception', code: 5, name: 'TB_EXCEPTION_OVRF_PACKET', master: 2, channel: 0, len: 1, data: '20' },
      { kind: 'exception', code: 5, name: 'TB_EXCEPTION_OVRF_PACKET', master: 1, channel: 0, len: 1, data: '10' },
      { kind: 'exception', code: 8, name: 'TB_EXCEPTION_OVRF', master: 1, channel: 0, len: 1, data: '99' },
    ]);
  });
});

describe('STP v1 pauses', () => {
  it('hot plug: input before the first resync pause is discarded and counted', () => {
    const junk = new StpStreamWriter().v1Data(4, 0x11223344).v1Data(1, 0x55, 0).bytes();
    const good = new StpStreamWriter().v1Master(3).v1Channel(4).v1Data(2, 0xbeef, 1).bytes();
    const stream = new Uint8Array([...junk, ...good]);
    const { events, records } = decode(stream, { version: 1, start: 'hot_plug' }, [[junk.length, 2]]);
    expect(events).toEqual([msg(3, 4, 'TS', 'beef')]);
    const skipped = records.find((r) => r.name === 'STP_NIBBLES_DISCARDED');
    expect(skipped?.fields.nibbles).toBe(junk.length * 2);
  });

  it('a closing pause above the max pause flushes open messages (end_of_stream_pause_ms)', () => {
    const w = new StpStreamWriter().v1Master(1).v1Channel(2).v1Data(1, 0x42);
    expect(decode(w.bytes(), { version: 1, endOfStreamPauseMs: 150 }).events).toEqual([
      msg(1, 2, 'PAUSE', '42'),
      { kind: 'marker', code: 0x23, name: 'TB_ERROR_PAUSE_IN_STP_STREAM_LONG', params: '' },
    ]);
    expect(decode(w.bytes(), { version: 1, endOfStreamPauseMs: null }).events).toEqual([]);
  });
});

describe('control messages', () => {
  it('a 4-byte header sent with D64 is not a control message', () => {
    const w = new StpStreamWriter().async().version(3).m8(1).c8(1).data(8, 0x0000040000000000n, 'M');
    expect(decode(w.bytes()).events).toEqual([msg(1, 1, 'M', '0000040000000000')]);
  });

  it('is recorded under its control name and still sent as a regular message', () => {
    const w = new StpStreamWriter().async().version(3).m8(1).c8(1).data(4, 0x00000400).data(4, 0x0001c200, 'M');
    const { records } = decode(w.bytes());
    const r = records.find((x) => x.kind === 'record');
    expect(r?.name).toBe('STP_CONTROL_BIT_RATE');
    expect(r?.fields.control).toEqual({
      header_len: 4,
      id: 4,
      byte_order: 'as_sent',
      type: 'bit_rate',
      bit_rate: 115200,
    });
    const ost = decodeOst(r!.raw);
    expect(ost.status === 'ok' && ost.message.kind === 'trace' && Buffer.from(ost.message.data).toString('hex')).toBe(
      '000004000001c200',
    );
  });
});

describe('records', () => {
  it('carry the OST message, device time flag 1100 for timestamped v2 closings and 1101 for v1', () => {
    const v2 = new StpStreamWriter().async().version(3).m8(0x41).c8(0x0f).data(4, 0xbaadf00d, 'MTS', '3123');
    const [rec] = decode(v2.bytes()).records.filter((r) => r.kind === 'record');
    expect(rec.name).toBe('STP_MESSAGE');
    expect(rec.stp).toEqual({ master: 0x41, channel: 0x0f });
    expect(rec.targetTs).toBe(0x123n);
    expect(rec.text).toContain('ba ad f0 0d');
    const ost = decodeOst(rec.raw);
    if (ost.status !== 'ok' || ost.message.kind !== 'trace') throw new Error('not an OST trace message');
    expect(ost.message.master).toBe(0x41);
    expect(splitOutputTimestamp(ost.message.timestamp).flag).toBe(0b1100);

    const v1 = new StpStreamWriter().v1Master(1).v1Channel(2).v1Data(1, 0x42, 0);
    const [rec1] = decode(v1.bytes(), { version: 1, output: 'phonet' }).records.filter((r) => r.kind === 'record');
    const ph = decodePhonet(rec1.raw);
    if (ph.status !== 'ok' || ph.message.kind !== 'trace') throw new Error('not a PhoNet trace message');
    expect(splitOutputTimestamp(ph.message.timestamp)).toEqual({ flag: 0b1101, ns: 1_000_000_000n });
  });

  it('markers and PhoNet exceptions become marker and error records', () => {
    const w = new StpStreamWriter().async().version(3).m8(1).data(1, 0x42).seq('F0C');
    const { records } = decode(w.bytes(), { output: 'phonet' });
    expect(records.map((r) => [r.kind, r.name])).toEqual([
      ['error', 'TB_EXCEPTION_UNFINISHED_MESSAGE'],
      ['marker', 'STP_MARKER_27'],
      // The padding nibble after the illegal packet is skipped input, reported at the end.
      ['error', 'STP_NIBBLES_DISCARDED'],
    ]);
    const marker = decodePhonet(records[1].raw);
    expect(marker.status === 'ok' && marker.message.kind === 'marker' && marker.message.index).toBe(1);
    expect(records[1].fields.params).toBe('0f000c');
  });
});

describe('lost input', () => {
  it('drops open messages, gives marker 0x06 and waits for the next sync', () => {
    const events: StpEvent[] = [];
    const records: DecodedRecord[] = [];
    const decoder = new StpDecoder({ output: 'phonet', onEvent: (e) => events.push(e) });
    const emit = (r: DecodedRecord) => records.push(r);
    decoder.push(new StpStreamWriter().async().version(3).m8(1).data(1, 0x42).bytes(), { hostNs: 1n }, emit);
    decoder.push(new StpStreamWriter().data(1, 0x43, 'M').bytes(), { hostNs: 2n, lostBytes: 10 }, emit);
    decoder.push(new StpStreamWriter().async().version(3).m8(1).data(1, 0x44, 'M').bytes(), { hostNs: 3n }, emit);
    expect(events.map(({ at_nibble: _, ...e }) => e)).toEqual([
      {
        kind: 'exception',
        code: 4,
        name: 'TB_EXCEPTION_UNFINISHED_MESSAGE',
        master: 1,
        channel: 0,
        len: 1,
        data: '42',
      },
      { kind: 'marker', code: 6, name: 'TB_ERROR_DATA_CORRUPTED', params: '' },
      msg(1, 0, 'M', '44'),
    ]);
    expect(records.find((r) => r.name === 'STP_INPUT_LOST')?.fields.lostBytes).toBe(10);
  });
});

describe('capture pauses', () => {
  it('a pause before the first byte ends the hot-plug wait at once', () => {
    const stream = new StpStreamWriter().v1Master(3).v1Channel(4).v1Data(1, 0x42, 0).bytes();
    const events: StpEvent[] = [];
    const decoder = new StpDecoder({ version: 1, start: 'hot_plug', onEvent: (e) => events.push(e) });
    for (const piece of capturePieces(stream.length, [{ at_byte: 0, ms: 5 }], 2)) {
      decoder.push(stream.subarray(piece.start, piece.end), { hostNs: piece.hostNs }, () => {});
    }
    expect(events.map(({ at_nibble: _, ...e }) => e)).toEqual([msg(3, 4, 'TS', '42')]);
  });
});
