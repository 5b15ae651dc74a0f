import type { DecodedRecord } from '@tracehub/contracts';
import {
  capturePieces,
  decodeOst,
  decodePhonet,
  Pkt,
  packetEntry,
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

/** A PhoNet 0x04 exception event: an unfinished message. */
const unfinished = (master: number, channel: number, data: string) => ({
  kind: 'exception',
  code: 4,
  name: 'TB_EXCEPTION_UNFINISHED_MESSAGE',
  master,
  channel,
  len: data.length / 2,
  data,
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
    expect(events[0]).toEqual(unfinished(1, 0, '01'));
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
    const w = new StpStreamWriter()
      .async()
      .version(3)
      .packet(Pkt.M16, 0x1234)
      .packet(Pkt.C16, 0xabcd)
      .m8(0x56)
      .data(1, 1, 'M');
    w.packet(Pkt.C16, 0xabcd).c8(0xef).data(1, 2, 'M');
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
    const w = new StpStreamWriter().async().version(3).m8(2).data(1, 0x20).m8(1).data(1, 0x10).packet(Pkt.GERR, 0x99);
    expect(decode(w.bytes(), { output: 'phonet' }).events).toEqual([
      { kind: 'exception', code: 5, name: 'TB_EXCEPTION_OVRF_PACKET', master: 2, channel: 0, len: 1, data: '20' },
      { kind: 'exception', code: 5, name: 'TB_EXCEPTION_OVRF_PACKET', master: 1, channel: 0, len: 1, data: '10' },
      { kind: 'exception', code: 8, name: 'TB_EXCEPTION_OVRF', master: 1, channel: 0, len: 1, data: '99' },
    ]);
  });
});

describe('TIME and TIME_TS', () => {
  it('are skipped with their clock, version and time field; open messages stay open (spec §3.2, §3.3)', () => {
    const w = new StpStreamWriter().async().version(3).m8(1).data(1, 0x11);
    w.time(0, 3, '41234'); // clock 0, version 3: length 4, time 0x1234
    w.time(2, 1, 'AB', '3123'); // clock 2, version 1: two nibbles; then its own timestamp 0x123
    w.data(1, 0x22, 'MTS', '201');
    const packets: string[] = [];
    const decoder = new StpDecoder({
      onPacket: (p) => packets.push(`${packetEntry(p).pkt} ${packetEntry(p).val ?? ''}`),
    });
    const events: StpEvent[] = [];
    const onEvent = (e: StpEvent) => events.push(e);
    const run = new StpDecoder({ onEvent });
    run.push(w.bytes(), { hostNs: 1n }, () => {});
    decoder.push(w.bytes(), { hostNs: 1n }, () => {});
    expect(packets.filter((p) => p.startsWith('TIME'))).toEqual(['TIME 0341234', 'TIME_TS 21AB']);
    // TIME_TS's timestamp field is a timestamp like any other: the next one replaces its low byte.
    expect(events.map(({ at_nibble: _, ...e }) => e)).toEqual([
      msg(1, 0, 'MTS', '1122', { closing_ts: '0x0000000000000101' }),
    ]);
  });

  it('with a timestamp version of 0 or 5..F, or a length nibble F, is an illegal packet', () => {
    const bad = new StpStreamWriter().async().version(3).m8(1).data(1, 0x11).time(0, 0, '');
    expect(decode(bad.bytes()).events).toEqual([
      { kind: 'marker', code: 0x27, name: 'TB_ERROR_RESERVED_STP_PACKET', params: '0f00040000' },
    ]);
    const badLength = new StpStreamWriter().async().version(3).m8(1).time(1, 3, 'F');
    expect(decode(badLength.bytes()).events).toEqual([
      { kind: 'marker', code: 0x27, name: 'TB_ERROR_RESERVED_STP_PACKET', params: '0f000401030f' },
    ]);
  });
});

describe('PhoNet long-message chains (spec §8)', () => {
  const exceptions = (events: StpEvent[]) =>
    events.map((e) => (e.kind === 'exception' ? `${e.code}:${e.len}` : `${e.kind}:${e.code ?? e.closed_by}`));
  /** A v2 message of `words` D64 packets on master 1, left open. */
  const longMessage = (words: number) => {
    const w = new StpStreamWriter().async().version(3).m8(1);
    for (let i = 0; i < words; i++) w.data(8, 0x0102030405060708n);
    return w;
  };

  it('a message of 140 000 bytes becomes 0x01, 0x02 (the middle) and 0x03, each at most 65 514 bytes', () => {
    const w = longMessage(17_499).data(8, 0x1122334455667788n, 'M');
    expect(exceptions(decode(w.bytes(), { output: 'phonet' }).events)).toEqual(['1:65514', '2:65514', '3:8972']);
    // OST: one message of the first 65 516 bytes.
    const [ost] = decode(w.bytes()).events;
    expect([ost.len, ost.truncated_from]).toEqual([65516, 140_000]);
  });

  it('an unfinished long message (illegal packet, long pause) ends its chain with 0x06', () => {
    const illegal = longMessage(17_500).seq('F0C');
    expect(exceptions(decode(illegal.bytes(), { output: 'phonet' }).events)).toEqual([
      '1:65514',
      '2:65514',
      '6:8972',
      'marker:39',
    ]);
    const v1 = new StpStreamWriter().packet(Pkt.MASTER, 1).packet(Pkt.V1_C8, 2);
    for (let i = 0; i < 17_500; i++) v1.v1Data(8, 0x0102030405060708n);
    const paused = decode(v1.bytes(), { version: 1, output: 'phonet', endOfStreamPauseMs: 150 });
    expect(exceptions(paused.events)).toEqual(['1:65514', '2:65514', '6:8972', 'marker:35']);
  });
});

describe('user and timebase markers (spec §10)', () => {
  it('a user marker is 0x02 from the main sender object (0x01) with its comment as a C string', () => {
    const records: DecodedRecord[] = [];
    const events: StpEvent[] = [];
    const decoder = new StpDecoder({ onEvent: (e) => events.push(e) });
    const emit = (r: DecodedRecord) => records.push(r);
    decoder.push(new StpStreamWriter().async().version(3).m8(1).data(1, 0x42, 'M').bytes(), { hostNs: 5n }, emit);
    decoder.userMarker('run 7 start', { hostNs: 2_000_000_000n }, emit);
    const marker = records.at(-1)!;
    expect([marker.kind, marker.name, marker.fields.comment, marker.text]).toEqual([
      'marker',
      'STP_MARKER_02',
      'run 7 start',
      'marker 0x02 TB_USER_MARKER #1 "run 7 start"',
    ]);
    const ost = decodeOst(marker.raw);
    if (ost.status !== 'ok' || ost.message.kind !== 'marker') throw new Error('not an OST marker');
    expect(ost.message.type).toBe(2);
    expect(ost.message.sender).toBe(0x01);
    expect(Buffer.from(ost.message.comment).toString('latin1')).toBe('run 7 start\0');
    expect(splitOutputTimestamp(ost.message.timestamp)).toEqual({ flag: 0b1101, ns: 2_000_000_000n });
    expect(events.at(-1)).toMatchObject({ kind: 'marker', code: 2, name: 'TB_USER_MARKER' });
  });

  it('a VERSION with a new timestamp format gives the two timebase markers, "Old timestamp!" then "New timestamp!"', () => {
    const w = new StpStreamWriter().async().version(3).m8(1).data(1, 0xaa, 'MTS', '3123');
    w.version(3).m8(1).data(1, 0xbb, 'MTS', '3124'); // the same format again: no change
    w.version(4).m8(1).data(1, 0xcc, 'MTS', '15');
    const { events, records } = decode(w.bytes(), { output: 'phonet' });
    expect(events.map((e) => `${e.kind}:${e.code ?? e.data}`)).toEqual([
      'message:aa',
      'message:bb',
      'marker:3',
      'marker:3',
      'message:cc',
    ]);
    const markers = records.filter((r) => r.kind === 'marker');
    expect(markers.map((r) => [r.name, r.fields.comment])).toEqual([
      ['STP_MARKER_03', 'Old timestamp!'],
      ['STP_MARKER_03', 'New timestamp!'],
    ]);
    for (const [i, r] of markers.entries()) {
      const m = decodePhonet(r.raw);
      if (m.status !== 'ok' || m.message.kind !== 'marker') throw new Error('not a PhoNet marker');
      expect([m.message.type, m.message.index]).toEqual([3, i + 1]);
      expect(Buffer.from(m.message.comment).toString('latin1')).toBe(`${i === 0 ? 'Old' : 'New'} timestamp!\0`);
    }
  });
});

describe('record text', () => {
  it('is the same whatever the receive time: device time when the message has one, never the host clock', () => {
    const w = new StpStreamWriter().async().version(3).m8(0x41).c8(2).data(4, 0xbaadf00d, 'M');
    w.data(1, 0x42, 'MTS', '3123').seq('F0C');
    const texts = (hostNs: bigint) => {
      const out: string[] = [];
      const decoder = new StpDecoder({ output: 'phonet' });
      decoder.push(w.bytes(), { hostNs }, (r) => out.push(r.text));
      decoder.end({ hostNs }, (r) => out.push(r.text));
      return out;
    };
    expect(texts(1_795_455_676_907_116_637n)).toEqual(texts(0n));
    expect(texts(0n)).toEqual([
      'M0041 C0002 M [4] ba ad f0 0d |....|',
      'M0041 C0002 @ts=0x0000000000000123 MTS [1] 42 |B|',
      'marker 0x27 TB_ERROR_RESERVED_STP_PACKET #1 params 0f 00 0c |...|',
    ]);
  });
});

describe('STP v1 pauses', () => {
  it('hot plug: input before the first resync pause is discarded and counted', () => {
    const junk = new StpStreamWriter().v1Data(4, 0x11223344).v1Data(1, 0x55, 0).bytes();
    const good = new StpStreamWriter().packet(Pkt.MASTER, 3).packet(Pkt.V1_C8, 4).v1Data(2, 0xbeef, 1).bytes();
    const stream = new Uint8Array([...junk, ...good]);
    const { events, records } = decode(stream, { version: 1, start: 'hot_plug' }, [[junk.length, 2]]);
    expect(events).toEqual([msg(3, 4, 'TS', 'beef')]);
    const skipped = records.find((r) => r.name === 'STP_NIBBLES_DISCARDED');
    expect(skipped?.fields.nibbles).toBe(junk.length * 2);
  });

  it('a closing pause above the max pause flushes open messages (end_of_stream_pause_ms)', () => {
    const w = new StpStreamWriter().packet(Pkt.MASTER, 1).packet(Pkt.V1_C8, 2).v1Data(1, 0x42);
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

    const v1 = new StpStreamWriter().packet(Pkt.MASTER, 1).packet(Pkt.V1_C8, 2).v1Data(1, 0x42, 0);
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
      unfinished(1, 0, '42'),
      { kind: 'marker', code: 6, name: 'TB_ERROR_DATA_CORRUPTED', params: '' },
      msg(1, 0, 'M', '44'),
    ]);
    expect(records.find((r) => r.name === 'STP_INPUT_LOST')?.fields.lostBytes).toBe(10);
  });
});

describe('capture pauses', () => {
  it('a pause before the first byte ends the hot-plug wait at once', () => {
    const stream = new StpStreamWriter().packet(Pkt.MASTER, 3).packet(Pkt.V1_C8, 4).v1Data(1, 0x42, 0).bytes();
    const events: StpEvent[] = [];
    const decoder = new StpDecoder({ version: 1, start: 'hot_plug', onEvent: (e) => events.push(e) });
    for (const piece of capturePieces(stream.length, [{ at_byte: 0, ms: 5 }], 2)) {
      decoder.push(stream.subarray(piece.start, piece.end), { hostNs: piece.hostNs }, () => {});
    }
    expect(events.map(({ at_nibble: _, ...e }) => e)).toEqual([msg(3, 4, 'TS', '42')]);
  });
});
