import { seededRandom } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import {
  encodedMessageLength,
  encodeMessage,
  encodeTraceLines,
  encodeTraceMessage,
  type PalmTraceEvent,
  type PalmTraceMessage,
  type PalmTraceParameter,
  PalmTraceParser,
  TRUNCATION_MARKER,
  TraceKind,
  timestampLow32,
} from '../src/index.js';

function decode(bytes: Uint8Array): { messages: PalmTraceMessage[]; events: PalmTraceEvent[] } {
  const events: PalmTraceEvent[] = [];
  new PalmTraceParser().push(bytes, (event) => events.push(event));
  return { events, messages: events.flatMap((event) => (event.type === 'message' ? [event.message] : [])) };
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

describe('encode → decode round trip', () => {
  it('every parameter and kind', () => {
    for (const kind of [TraceKind.Text, TraceKind.TextLine, TraceKind.Binary]) {
      const parameters: PalmTraceParameter[] = [
        { type: 'attributes', module: 0xffff, kind },
        { type: 'indentation', level: 255 },
        { type: 'processId', processId: 0xffffffff },
        { type: 'threadId', threadId: 0x80000001 },
        { type: 'timestamp', timestamp: 0xdeadbeef },
        { type: 'vendor', opcode: 0xff, data: Uint8Array.of(9, 8, 7) },
        { type: 'traceData', data: ascii('a\u0000b') },
        { type: 'vendor', opcode: 0x80, data: new Uint8Array(0) },
      ];
      const bytes = encodeMessage(parameters);
      expect(bytes.length).toBe(encodedMessageLength(parameters));
      const { messages } = decode(bytes);
      expect(messages).toHaveLength(1);
      const [message] = messages;
      expect(message.parameters).toEqual(parameters);
      expect(message).toMatchObject({
        module: 0xffff,
        kind,
        lineBreak: kind === TraceKind.TextLine,
        indentation: 255,
        processId: 0xffffffff,
        threadId: 0x80000001,
        timestamp: 0xdeadbeef,
        text: kind === TraceKind.Binary ? null : 'a\u0000b',
      });
    }
  });

  it('data over 65 535 bytes is split into consecutive Trace Data and joined again', () => {
    for (const size of [65_535, 65_536, 70_000, 3 * 65_535 + 1]) {
      const data = new Uint8Array(size).map((_, i) => 0x20 + (i % 90));
      const pieces = Math.ceil(size / 65_535);
      const bytes = encodeTraceMessage({ bytes: data, kind: TraceKind.TextLine });
      expect(bytes.length).toBe(6 + 8 + pieces * 3 + size + 3);
      // The first Trace Data header carries 65 535 (FF FF).
      expect([bytes[14], bytes[15], bytes[16]]).toEqual([5, size >= 65_535 ? 0xff : 0, size >= 65_535 ? 0xff : 0]);
      const { messages, events } = decode(bytes);
      expect(events.filter((event) => event.type === 'problem')).toEqual([]);
      expect(messages[0].parameters.filter((parameter) => parameter.type === 'traceData')).toHaveLength(pieces);
      expect(Buffer.compare(messages[0].data, data)).toBe(0);
      expect(messages[0].text?.length).toBe(size);
      expect(messages[0].lineBreak).toBe(true);
    }
  });

  it('random valid messages', () => {
    const random = seededRandom(42);
    const int = (max: number) => Math.floor(random() * (max + 1));
    const bytesOf = (max: number) => Uint8Array.from({ length: int(max) }, () => int(255));
    for (let round = 0; round < 1000; round++) {
      const kind = int(2) as TraceKind;
      const parameters: PalmTraceParameter[] = [];
      const optional: PalmTraceParameter[] = [
        { type: 'indentation', level: int(255) },
        { type: 'processId', processId: int(0xffffffff) },
        { type: 'threadId', threadId: int(0xffffffff) },
        { type: 'timestamp', timestamp: int(0xffffffff) },
        { type: 'vendor', opcode: 128 + int(127), data: bytesOf(8) },
      ];
      for (const parameter of optional) if (random() < 0.5) parameters.push(parameter);
      parameters.push({ type: 'attributes', module: int(0xffff), kind });
      for (let i = 0; i <= int(3); i++) parameters.push({ type: 'traceData', data: bytesOf(40) });
      const { messages, events } = decode(encodeMessage(parameters));
      expect(messages[0].parameters).toEqual(parameters);
      expect(
        events
          .filter((event) => event.type === 'problem')
          .map((event) => event.type === 'problem' && event.problem.code),
      ).toEqual(parameters.filter((parameter) => parameter.type === 'vendor').map(() => 'unknown-opcode'));
    }
  });

  it('encodeTraceLines sends one kind-1 message per line, without line break characters', () => {
    const bytes = encodeTraceLines({ text: 'one\r\ntwo\nthree\r\n', processId: 4, threadId: 2, timestampMs: 5 });
    const messages = bytes.flatMap((message) => decode(message).messages);
    expect(messages.map((message) => [message.text, message.lineBreak, message.processId])).toEqual([
      ['one', true, 4],
      ['two', true, 4],
      ['three', true, 4],
    ]);
    expect(encodeTraceLines({ text: '' })).toHaveLength(1);
  });

  it('timestamps keep the low 32 bits of milliseconds', () => {
    expect(timestampLow32(2 ** 32 + 7)).toBe(7);
    expect(timestampLow32(1_700_000_000_123n)).toBe(Number(1_700_000_000_123n % 2n ** 32n));
    expect(timestampLow32(-1)).toBe(0xffffffff);
    expect(decode(encodeTraceMessage({ text: 't', timestampMs: 2 ** 40 + 1000 })).messages[0].timestamp).toBe(1000);
  });

  it('maxDataBytes cuts long text and says so', () => {
    const [message] = decode(encodeTraceMessage({ text: 'x'.repeat(100), maxDataBytes: 50 })).messages;
    expect(message.text).toBe('x'.repeat(50 - TRUNCATION_MARKER.length) + TRUNCATION_MARKER);
    const [binary] = decode(encodeTraceMessage({ bytes: new Uint8Array(100), maxDataBytes: 10 })).messages;
    expect(binary.data.length).toBe(10);
  });

  it('the encoder refuses what a receiver would drop', () => {
    const data = { type: 'traceData', data: new Uint8Array(1) } as const;
    expect(() => encodeMessage([data])).toThrow(/follow an Attributes/);
    expect(() => encodeMessage([{ type: 'attributes', module: 1, kind: TraceKind.Text }])).toThrow(
      /at least one Trace Data/,
    );
    expect(() => encodeMessage([{ type: 'attributes', module: 0x10000, kind: 0 }, data])).toThrow(/module/);
    expect(() => encodeMessage([{ type: 'attributes', module: 1, kind: 3 as TraceKind }, data])).toThrow(/kind/);
    expect(() => encodeTraceMessage({ text: 'a', processId: -1 })).toThrow(/process id/);
    expect(() =>
      encodeMessage([
        { type: 'attributes', module: 1, kind: 0 },
        { type: 'vendor', opcode: 7, data: new Uint8Array(0) },
        data,
      ]),
    ).toThrow(/vendor/);
    expect(() => encodeTraceMessage({})).toThrow(/exactly one of/);
  });
});
