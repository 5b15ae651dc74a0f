import type { DecodedRecord } from '@tracehub/contracts';
import { decodeOst, decodePhonet, SwdDecoder, type SwdDecoderOptions } from '@tracehub/stp';
import { describe, expect, it } from 'vitest';

function run(bytes: number[], options: SwdDecoderOptions = {}, chunk = 1 << 20): DecodedRecord[] {
  const records: DecodedRecord[] = [];
  const d = new SwdDecoder(options);
  const input = Uint8Array.from(bytes);
  for (let i = 0; i < input.length; i += chunk)
    d.push(input.subarray(i, i + chunk), { hostNs: 5n }, (r) => records.push(r));
  d.end({ hostNs: 6n }, (r) => records.push(r));
  return records;
}

const summary = (records: DecodedRecord[]) =>
  records.map((r) => (r.name === 'SWD_MESSAGE' ? `msg ${r.fields.data}` : `${r.name} ${JSON.stringify(r.fields)}`));

describe('SWD deframer', () => {
  it('delivers a frame as an OST wrapper message (0x99, type 0x01)', () => {
    const records = run([0xc0, 0x01, 0x02, 0x03, 0xc1], { port: 0x0c, processor: 2 });
    expect(summary(records)).toEqual(['msg 010203']);
    const ost = decodeOst(records[0].raw);
    expect(ost).toEqual({
      status: 'ok',
      size: 10,
      message: { kind: 'swd', port: 0x0c, processor: 2, data: Uint8Array.of(1, 2, 3) },
    });
  });

  it('un-escapes PREFIX (0x7D): the next byte XOR 0x20', () => {
    expect(summary(run([0xc0, 0x7d, 0xe0, 0x7d, 0xe1, 0x7d, 0x5d, 0x11, 0xc1]))).toEqual(['msg c0c17d11']);
  });

  it('discards the empty message C0 C1', () => {
    expect(run([0xc0, 0xc1])).toEqual([]);
  });

  it('skips padding between frames silently and reports other stray bytes', () => {
    const records = run([0x00, 0xff, 0x00, 0xc0, 0x05, 0xc1, 0x12, 0x34, 0xc0, 0x06, 0xc1, 0xff, 0xff]);
    expect(summary(records)).toEqual(['msg 05', 'SWD_BYTES_SKIPPED {"bytes":2}', 'msg 06']);
  });

  it('a START inside a frame drops the current message and opens a new one', () => {
    expect(summary(run([0xc0, 0x01, 0x02, 0xc0, 0x03, 0xc1]))).toEqual([
      'SWD_FRAME_VIOLATION {"reason":"start_inside_frame","droppedBytes":2}',
      'msg 03',
    ]);
  });

  it('an escaped framing byte drops the current message (a START after PREFIX still opens the next)', () => {
    expect(summary(run([0xc0, 0x01, 0x7d, 0xc1, 0x02, 0xc0, 0x04, 0x7d, 0xc0, 0x05, 0xc1]))).toEqual([
      'SWD_FRAME_VIOLATION {"reason":"bad_escape","droppedBytes":1}',
      'SWD_BYTES_SKIPPED {"bytes":1}',
      'SWD_FRAME_VIOLATION {"reason":"bad_escape","droppedBytes":1}',
      'msg 05',
    ]);
  });

  it('truncates a frame over the size limit (not dropped) and drops a frame cut off by the end of the stream', () => {
    const records = run([0xc0, 1, 2, 3, 4, 5, 0xc1, 0xc0, 9, 0xc1, 0xc0, 7], { maxMessageBytes: 4 });
    expect(summary(records)).toEqual([
      'msg 01020304',
      'msg 09',
      'SWD_FRAME_VIOLATION {"reason":"unterminated","droppedBytes":1}',
    ]);
    expect(records[0].fields.truncatedFrom).toBe(5);
    expect(records[0].text).toBe('SWD [4] 01 02 03 04 |....| (truncated from 5 bytes)');
    expect(records[1].fields.truncatedFrom).toBeUndefined();
  });

  it('says where bytes of the link were lost (th-lost): a frame they cut is dropped, and the loss is a record', () => {
    const records: DecodedRecord[] = [];
    const d = new SwdDecoder();
    const emit = (r: DecodedRecord) => records.push(r);
    d.push(Uint8Array.of(0xc0, 1, 0xc1, 0xc0, 2), { hostNs: 1n }, emit);
    // Lost inside the open frame (its rest is stray: 03 skipped, C1 padding), then lost between frames.
    d.push(Uint8Array.of(3, 0xc1, 0xc0, 4, 0xc1), { hostNs: 2n, lostBytes: 50 }, emit);
    d.push(Uint8Array.of(0xc0, 5, 0xc1), { hostNs: 3n, lostBytes: 7 }, emit);
    d.end({ hostNs: 4n }, emit);
    expect(summary(records)).toEqual([
      'msg 01',
      'SWD_FRAME_VIOLATION {"reason":"lost_input","droppedBytes":1}',
      'SWD_INPUT_LOST {"lostBytes":50}',
      'SWD_BYTES_SKIPPED {"bytes":1}',
      'msg 04',
      'SWD_INPUT_LOST {"lostBytes":7}',
      'msg 05',
    ]);
    expect(records.filter((r) => r.name === 'SWD_INPUT_LOST').every((r) => r.kind === 'error')).toBe(true);
  });
  it('truncates at what one output message holds: 0xFFFF less the wrapper header (OST 11, PhoNet 12 bytes)', () => {
    const frame = [0xc0, ...Array.from({ length: 70_000 }, (_, i) => i & 0x3f), 0xc1];
    for (const [output, decodeOne, limit] of [
      ['ost', decodeOst, 65524],
      ['phonet', decodePhonet, 65523],
    ] as const) {
      const [record] = run(frame, { output });
      expect(record.fields).toMatchObject({ length: limit, truncatedFrom: 70_000 });
      expect(record.raw.length).toBe(0xffff);
      const decoded = decodeOne(record.raw);
      expect(decoded.status === 'ok' && decoded.message.kind === 'swd' && decoded.message.data.length).toBe(limit);
    }
  });

  it('takes repeated START marks before a frame and END marks after it as padding, not violations', () => {
    // Words padded with framing marks: C0 C0 | 01 02 | C1 C1 C1 C1 | C0 C0 C0 03 C1 C1 C1.
    const records = run([0xc0, 0xc0, 0x01, 0x02, 0xc1, 0xc1, 0xc1, 0xc1, 0xc0, 0xc0, 0xc0, 0x03, 0xc1, 0xc1, 0xc1]);
    expect(summary(records)).toEqual(['msg 0102', 'msg 03']);
    // A START after data still breaks the frame off.
    expect(summary(run([0xc0, 0xc0, 0x01, 0xc0, 0xc0, 0x02, 0xc1]))).toEqual([
      'SWD_FRAME_VIOLATION {"reason":"start_inside_frame","droppedBytes":1}',
      'msg 02',
    ]);
  });

  it('writes the processor index (0..255) into the wrapper and refuses one that does not fit its byte', () => {
    for (const processor of [0, 1, 255]) {
      const [record] = run([0xc0, 0x42, 0xc1], { processor });
      const ost = decodeOst(record.raw);
      expect(ost.status === 'ok' && ost.message.kind === 'swd' && ost.message.processor).toBe(processor);
    }
    for (const processor of [-1, 256, 1.5, Number.NaN]) {
      expect(() => new SwdDecoder({ processor }), String(processor)).toThrow(/processor must be an integer 0\.\.255/);
    }
    expect(() => new SwdDecoder({ port: 0x100 })).toThrow(/port must be an integer 0\.\.255/);
  });

  it('gives the same records for any chunking and across snapshot/restore, and PhoNet wrappers', () => {
    const input = [0x00, 0xc0, 0x10, 0x7d, 0x5d, 0x20, 0xc1, 0x33, 0xc0, 0xc0, 0x44, 0xc1, 0xc0, 0x55];
    const whole = run(input, { output: 'phonet' });
    for (const chunk of [1, 2, 3, 5]) expect(run(input, { output: 'phonet' }, chunk)).toEqual(whole);
    const records: DecodedRecord[] = [];
    let d = new SwdDecoder({ output: 'phonet' });
    for (const b of input) {
      d = SwdDecoder.restore(JSON.parse(JSON.stringify(d.snapshot())));
      d.push(Uint8Array.of(b), { hostNs: 5n }, (r) => records.push(r));
    }
    d.end({ hostNs: 6n }, (r) => records.push(r));
    expect(records).toEqual(whole);
    const ph = decodePhonet(whole[0].raw);
    expect(ph.status === 'ok' && ph.message.kind === 'swd' && Array.from(ph.message.data)).toEqual([0x10, 0x7d, 0x20]);
  });
});
