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

  it('drops frames over the size limit and frames cut off by the end of the stream', () => {
    expect(summary(run([0xc0, 1, 2, 3, 4, 5, 0xc1, 0xc0, 9, 0xc1, 0xc0, 7], { maxMessageBytes: 4 }))).toEqual([
      'SWD_FRAME_VIOLATION {"reason":"too_long","droppedBytes":4}',
      'SWD_BYTES_SKIPPED {"bytes":1}',
      'msg 09',
      'SWD_FRAME_VIOLATION {"reason":"unterminated","droppedBytes":1}',
    ]);
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
