import { seededRandom } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import {
  encodeMessage,
  type PalmTraceEvent,
  type PalmTraceParameter,
  PalmTraceParser,
  type PalmTraceProblemCode,
} from '../src/index.js';
import { concat } from './helpers.js';

const MAX_MESSAGE_LENGTH = 512;

const ALL_CODES: PalmTraceProblemCode[] = [
  'bad-version',
  'bad-length',
  'parameter-overrun',
  'missing-end',
  'bytes-after-end',
  'bad-parameter-length',
  'bad-kind',
  'missing-attributes',
  'missing-trace-data',
  'unknown-opcode',
  'mixed-kinds',
  'line-break-not-last',
  'truncated-message',
];

describe('decoder fuzz', () => {
  it('never throws, never buffers more than the cap, on 120 000 random and mutated inputs', () => {
    const random = seededRandom(20240607);
    const int = (max: number) => Math.floor(random() * (max + 1));
    const bytesOf = (length: number) => {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) out[i] = int(255);
      return out;
    };

    const validMessage = (): Uint8Array => {
      const parameters: PalmTraceParameter[] = [];
      if (random() < 0.3) parameters.push({ type: 'processId', processId: int(0xffffffff) });
      parameters.push({ type: 'attributes', module: int(0xffff), kind: int(2) as 0 | 1 | 2 });
      parameters.push({ type: 'traceData', data: bytesOf(int(12)) });
      if (random() < 0.3) parameters.push({ type: 'vendor', opcode: 128 + int(127), data: bytesOf(int(3)) });
      if (random() < 0.3) parameters.push({ type: 'attributes', module: 1, kind: int(2) as 0 | 1 | 2 });
      if (random() < 0.5) parameters.push({ type: 'traceData', data: bytesOf(int(6)) });
      return encodeMessage(parameters);
    };

    /** A header whose length is about right, then parameters with random opcodes and lengths. */
    const structuredGarbage = (): Uint8Array => {
      const parameters: Uint8Array[] = [];
      for (let i = int(4); i >= 0; i--) {
        const opcode = [0, 1, 2, 3, 4, 5, 6, 7, 100, 128, 255][int(10)];
        const length = random() < 0.7 ? [0, 1, 4, 5][int(3)] : int(10);
        const data = bytesOf(Math.max(0, length + int(2) - 1));
        if (opcode === 1 && data.length > 4) data[4] = int(4);
        parameters.push(concat(Uint8Array.of(opcode, length >> 8, length), data));
      }
      const body = concat(...parameters);
      const length = 6 + body.length + (random() < 0.7 ? 0 : int(6) - 3);
      return concat(Uint8Array.of(1, int(2), 0, 0, length >> 8, length & 0xff), body);
    };

    const mutate = (input: Uint8Array): Uint8Array => {
      let bytes = input;
      for (let n = 1 + int(3); n > 0 && bytes.length > 0; n--) {
        const at = int(bytes.length - 1);
        switch (int(4)) {
          case 0:
            bytes[at] ^= 1 << int(7);
            break;
          case 1:
            bytes[at] = int(255);
            break;
          case 2:
            bytes = bytes.subarray(0, at);
            break;
          case 3:
            bytes = concat(bytes.subarray(0, at), bytesOf(1 + int(4)), bytes.subarray(at));
            break;
          default:
            bytes = concat(bytes.subarray(0, at), bytes.subarray(at + 1 + int(6)));
        }
      }
      return bytes;
    };

    const seen = new Set<string>();
    let messages = 0;
    const started = performance.now();
    for (let round = 0; round < 120_000; round++) {
      let input: Uint8Array;
      const pick = int(9);
      if (pick < 2) {
        input = bytesOf(int(40));
        if (random() < 0.7 && input.length > 0) input[0] = 1;
      } else if (pick < 4) {
        input = structuredGarbage();
      } else if (pick < 5) {
        // A header declaring a long message, and less data than it declares.
        const length = random() < 0.5 ? MAX_MESSAGE_LENGTH : int(0xffffffff);
        input = concat(Uint8Array.of(1, 0, length >>> 24, length >>> 16, length >>> 8, length), bytesOf(int(300)));
      } else {
        input = mutate(concat(validMessage(), ...(random() < 0.5 ? [validMessage()] : [])));
      }

      const parser = new PalmTraceParser({ maxMessageLength: MAX_MESSAGE_LENGTH });
      const emit = (event: PalmTraceEvent) => {
        if (event.type === 'message') {
          messages++;
          if (event.message.length > MAX_MESSAGE_LENGTH) throw new Error('message longer than the cap');
        } else {
          seen.add(event.problem.code);
          if (event.problem.description.length === 0) throw new Error('problem without a description');
        }
      };
      for (let at = 0; at < input.length; ) {
        const size = random() < 0.5 ? input.length : 1 + int(20);
        parser.push(input.subarray(at, at + size), emit);
        if (parser.bufferCapacity > MAX_MESSAGE_LENGTH) throw new Error(`buffer grew to ${parser.bufferCapacity}`);
        at += size;
      }
      parser.end(emit);
    }
    const elapsedMs = performance.now() - started;
    expect(messages).toBeGreaterThan(10_000);
    expect([...seen].sort()).toEqual([...ALL_CODES].sort());
    expect(elapsedMs).toBeLessThan(30_000);
  });

  it('a declared length can make it buffer at most maxMessageLength', () => {
    const parser = new PalmTraceParser({ maxMessageLength: 4096 });
    const events: PalmTraceEvent[] = [];
    parser.push(Uint8Array.of(1, 0, 0, 0, 0x10, 0x00), (event) => events.push(event));
    for (let i = 0; i < 4089; i++) parser.push(Uint8Array.of(0), (event) => events.push(event));
    expect(parser.bufferedBytes).toBe(4095);
    expect(parser.bufferCapacity).toBeLessThanOrEqual(4096);
    expect(events).toEqual([]);

    const huge = new PalmTraceParser();
    huge.push(Uint8Array.of(1, 0, 0xff, 0xff, 0xff, 0xff), (event) => events.push(event));
    expect(huge.ended).toBe(true);
    expect(huge.bufferCapacity).toBe(0);
    expect(events.map((event) => event.type === 'problem' && event.problem.code)).toEqual(['bad-length']);
  });
});
