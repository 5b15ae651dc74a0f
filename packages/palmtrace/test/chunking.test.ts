import { seededRandom } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { encodeTraceMessage, TraceKind } from '../src/index.js';
import { concat, digestEvents, hex, parseInChunks } from './helpers.js';

// Spec §7 examples (typed from the spec), a message the spec says to drop (N3), and some
// encoder output, so that every parser path meets every cut position.
const smallStream = concat(
  hex('01 00 00 00 00 19  01 00 05 80 00 00 00 01  05 00 05 48 65 6C 6C 6F  00 00 00'),
  hex('01 00 00 00 00 18  01 00 05 01 00 00 00 00  05 00 04 78 3D 34 32  00 00 00'),
  hex('01 00 00 00 00 18  01 00 05 80 00 00 00 02  05 00 04 DE AD BE EF  00 00 00'),
  hex(
    '01 00 00 00 00 2F 01 00 05 80 00 00 00 01 02 00 01 03 03 00 04 00 00 12 34 04 00 04 00 00 00 07 06 00 04 00 00 03 E8 05 00 02 48 69 00 00 00',
  ),
  hex('01 00 00 00 00 13 01 00 04 80 00 00 01 05 00 00 00 00 00'),
  hex('01 00 00 00 00 1C  01 00 05 80 00 00 00 01  05 00 03 48 65 6C  05 00 02 6C 6F  00 00 00'),
  hex('01 00 00 00 00 1B  01 00 05 80 00 00 00 00  80 00 02 01 02  05 00 02 6F 6B  00 00 00'),
  hex('01 00 00 00 00 14  01 00 05 80 00 00 00 01  05 00 00  00 00 00'),
  encodeTraceMessage({ text: 'Grüße €', processId: 3, threadId: 9, timestampMs: 123456789 }),
  // Ends with a message whose framing is lost, then bytes that must be ignored.
  hex('02 00 00 00 00 14 01 00 05 80 00 00 00 01 05 00 00 00 00 00 01 00'),
);

describe('any chunking of a stream decodes the same', () => {
  const whole = parseInChunks(smallStream, () => smallStream.length);
  const wholeDigest = digestEvents(whole);

  it('the reference decode has the expected shape', () => {
    expect(whole.filter((event) => event.type === 'message')).toHaveLength(8);
    expect(whole.map((event) => (event.type === 'problem' ? event.problem.code : 'message'))).toEqual([
      'message',
      'message',
      'message',
      'message',
      'bad-parameter-length',
      'message',
      'unknown-opcode',
      'message',
      'message',
      'message',
      'bad-version',
    ]);
  });

  it('every fixed chunk size 1..n', () => {
    for (let size = 1; size <= smallStream.length; size++) {
      expect(digestEvents(parseInChunks(smallStream, () => size))).toEqual(wholeDigest);
    }
  });

  it('random chunk sizes, including a message split over several Trace Data parameters', () => {
    const big = new Uint8Array(150_000).map((_, i) => (i * 31) & 0xff);
    const stream = concat(
      encodeTraceMessage({ text: 'before' }),
      encodeTraceMessage({ bytes: big, processId: 1 }),
      encodeTraceMessage({ text: 'x'.repeat(70_000), kind: TraceKind.Text }),
      smallStream,
    );
    const events = parseInChunks(stream, () => stream.length);
    expect(events.filter((event) => event.type === 'message')).toHaveLength(11);
    const reference = digestEvents(events);
    const random = seededRandom(7);
    // Tiny pieces are covered by the fixed sizes above; one round of them here is enough.
    for (let round = 0; round < 40; round++) {
      const limit = round === 0 ? 3 : [40, 1500, 70_000, 200_000][round % 4];
      expect(digestEvents(parseInChunks(stream, () => 1 + Math.floor(random() * limit)))).toEqual(reference);
    }
  });
});
