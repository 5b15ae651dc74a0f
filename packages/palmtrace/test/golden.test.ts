import { describe, expect, it } from 'vitest';
import {
  encodeMessage,
  encodeTraceMessage,
  PalmErrorClass,
  type PalmTraceEvent,
  type PalmTraceParameter,
  PalmTraceParser,
  type PalmTraceProblem,
  TraceKind,
} from '../src/index.js';
import { hex, parseChunks } from './helpers.js';

// Bytes typed from the hex of spec §7 (palmtrace-protocol.md), never produced by the code.
const E1 = hex('01 00 00 00 00 19  01 00 05 80 00 00 00 01  05 00 05 48 65 6C 6C 6F  00 00 00');
const E2 = hex('01 00 00 00 00 18  01 00 05 01 00 00 00 00  05 00 04 78 3D 34 32  00 00 00');
const E3 = hex('01 00 00 00 00 18  01 00 05 80 00 00 00 02  05 00 04 DE AD BE EF  00 00 00');
const E4 = hex(`01 00 00 00 00 2F
  01 00 05 80 00 00 00 01
  02 00 01 03
  03 00 04 00 00 12 34
  04 00 04 00 00 00 07
  06 00 04 00 00 03 E8
  05 00 02 48 69
  00 00 00`);
const E5 = hex('01 00 00 00 00 1C  01 00 05 80 00 00 00 01  05 00 03 48 65 6C  05 00 02 6C 6F  00 00 00');
const E6 = hex('01 00 00 00 00 1B  01 00 05 80 00 00 00 00  80 00 02 01 02  05 00 02 6F 6B  00 00 00');
const E7 = hex('01 00 00 00 00 14  01 00 05 80 00 00 00 01  05 00 00  00 00 00');
// N1 is given as a prefix ("02 00 00 00 00 14 …"); the rest of a 20-byte message is filled in.
const N1 = hex('02 00 00 00 00 14  01 00 05 80 00 00 00 01  05 00 00  00 00 00');
const N2 = hex('01 00 00 00 00 05');
const N3 = hex('01 00 00 00 00 13 01 00 04 80 00 00 01 05 00 00 00 00 00');

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

const parseAll = (...chunks: Uint8Array[]) => parseChunks(chunks);

function problems(events: PalmTraceEvent[]): PalmTraceProblem[] {
  return events.flatMap((event) => (event.type === 'problem' ? [event.problem] : []));
}

function messages(events: PalmTraceEvent[]) {
  return events.flatMap((event) => (event.type === 'message' ? [event.message] : []));
}

describe('encoder: spec §7 worked examples, byte for byte', () => {
  it('E1 HostTraceOutputTL(appErrorClass, "Hello")', () => {
    expect(encodeTraceMessage({ module: PalmErrorClass.appErrorClass, text: 'Hello' })).toEqual(E1);
    expect(E1.length).toBe(25);
  });
  it('E2 HostTraceOutputT(memErrorClass, "x=42")', () => {
    expect(encodeTraceMessage({ module: PalmErrorClass.memErrorClass, kind: TraceKind.Text, text: 'x=42' })).toEqual(
      E2,
    );
  });
  it('E3 HostTraceOutputB(appErrorClass, DE AD BE EF)', () => {
    expect(encodeTraceMessage({ bytes: Uint8Array.of(0xde, 0xad, 0xbe, 0xef) })).toEqual(E3);
  });
  it('E4 all optional parameters', () => {
    expect(
      encodeTraceMessage({ indentation: 3, processId: 0x1234, threadId: 7, timestampMs: 1000, text: 'Hi' }),
    ).toEqual(E4);
    expect(
      encodeMessage([
        { type: 'attributes', module: 0x8000, kind: TraceKind.TextLine },
        { type: 'indentation', level: 3 },
        { type: 'processId', processId: 0x1234 },
        { type: 'threadId', threadId: 7 },
        { type: 'timestamp', timestamp: 1000 },
        { type: 'traceData', data: ascii('Hi') },
      ]),
    ).toEqual(E4);
  });
  it.each<[string, Uint8Array, PalmTraceParameter[]]>([
    [
      'E5 text split over two Trace Data parameters',
      E5,
      [
        { type: 'attributes', module: 0x8000, kind: TraceKind.TextLine },
        { type: 'traceData', data: ascii('Hel') },
        { type: 'traceData', data: ascii('lo') },
      ],
    ],
    [
      'E6 vendor parameter 0x80',
      E6,
      [
        { type: 'attributes', module: 0x8000, kind: TraceKind.Text },
        { type: 'vendor', opcode: 0x80, data: Uint8Array.of(1, 2) },
        { type: 'traceData', data: ascii('ok') },
      ],
    ],
  ])('%s', (_example, expected, parameters) => {
    expect(encodeMessage(parameters)).toEqual(expected);
  });
  it('E7 smallest legal message: empty line', () => {
    expect(encodeTraceMessage({ text: '' })).toEqual(E7);
    expect(E7.length).toBe(20);
  });
});

describe('decoder: spec §7 worked examples', () => {
  it('E1', () => {
    const events = parseAll(E1);
    expect(problems(events)).toEqual([]);
    expect(messages(events)).toMatchObject([
      { module: 0x8000, kind: TraceKind.TextLine, lineBreak: true, text: 'Hello', length: 25, versionMinor: 0 },
    ]);
  });
  it('E2 and E3', () => {
    const [e2, e3] = messages(parseAll(E2, E3));
    expect(e2).toMatchObject({ module: 0x0100, kind: TraceKind.Text, lineBreak: false, text: 'x=42' });
    expect(e3).toMatchObject({ module: 0x8000, kind: TraceKind.Binary, text: null, streamOffset: 24 });
    expect(e3.data).toEqual(Uint8Array.of(0xde, 0xad, 0xbe, 0xef));
  });
  it('E4', () => {
    const [e4] = messages(parseAll(E4));
    expect(e4).toMatchObject({ indentation: 3, processId: 0x1234, threadId: 7, timestamp: 1000, text: 'Hi' });
  });
  it('E5 joins the Trace Data and shows one line', () => {
    const events = parseAll(E5);
    expect(problems(events)).toEqual([]);
    expect(messages(events)).toMatchObject([{ text: 'Hello', lineBreak: true }]);
  });
  it('E6 skips the vendor parameter and reports it', () => {
    const events = parseAll(E6);
    expect(messages(events)).toMatchObject([{ text: 'ok', lineBreak: false, kind: TraceKind.Text }]);
    expect(problems(events)).toMatchObject([{ code: 'unknown-opcode', action: 'skip-parameter' }]);
    expect(events[0].type).toBe('problem');
  });
  it('E6 with 0x80 declared as a known vendor extension: kept, not reported', () => {
    const parser = new PalmTraceParser({ knownVendorOpcodes: [0x80] });
    const events: PalmTraceEvent[] = [];
    parser.push(E6, (event) => events.push(event));
    expect(problems(events)).toEqual([]);
    expect(messages(events)[0].parameters).toContainEqual({ type: 'vendor', opcode: 0x80, data: Uint8Array.of(1, 2) });
  });
  it('E7', () => {
    expect(messages(parseAll(E7))).toMatchObject([{ text: '', lineBreak: true, length: 20 }]);
  });
});

describe('decoder: spec §7 messages that must be rejected', () => {
  it('N1 major version 2 drops the connection; nothing after it is read', () => {
    const parser = new PalmTraceParser();
    const events: PalmTraceEvent[] = [];
    parser.push(N1, (event) => events.push(event));
    parser.push(E1, (event) => events.push(event));
    expect(events).toHaveLength(1);
    expect(problems(events)).toMatchObject([{ code: 'bad-version', action: 'end-connection', streamOffset: 0 }]);
    expect(problems(events)[0].description).toMatch(/major version 2/);
    expect(parser.ended).toBe(true);
    expect(parser.stats().ignoredBytes).toBe(E1.length);
  });
  it('N1 is rejected from its first byte alone', () => {
    expect(problems(parseAll(N1.subarray(0, 1)))).toMatchObject([{ code: 'bad-version', action: 'end-connection' }]);
  });
  it('N2 length 5 drops the connection', () => {
    const events = parseAll(N2, E1);
    expect(messages(events)).toEqual([]);
    expect(problems(events)).toMatchObject([{ code: 'bad-length', action: 'end-connection', messageLength: 5 }]);
  });
  it('N3 Attributes of length 4 drops the message; the next message is read', () => {
    const events = parseAll(N3, E1);
    expect(problems(events)).toMatchObject([
      { code: 'bad-parameter-length', action: 'drop-message', streamOffset: 0, messageLength: 19 },
    ]);
    expect(problems(events)[0].description).toMatch(/Attributes parameter at byte 6 has 4 data bytes/);
    expect(messages(events)).toMatchObject([{ text: 'Hello', streamOffset: 19 }]);
  });
});

describe('decoder: reading choices of §4.2 and §6.7 (hand-typed bytes)', () => {
  it('a later minor version is read', () => {
    const minor5 = hex('01 05 00 00 00 14  01 00 05 80 00 00 00 01  05 00 00  00 00 00');
    expect(messages(parseAll(minor5))).toMatchObject([{ versionMinor: 5, text: '' }]);
  });
  it('binary then text under a second Attributes: shown as text, reported', () => {
    // Attributes kind 2, data "AB", Attributes kind 1, data "C", End.
    const mixed = hex(
      '01 00 00 00 00 22  01 00 05 80 00 00 00 02  05 00 02 41 42  01 00 05 80 00 00 00 01  05 00 01 43  00 00 00',
    );
    const events = parseAll(mixed);
    expect(problems(events)).toMatchObject([{ code: 'mixed-kinds', action: 'normalize' }]);
    expect(messages(events)).toMatchObject([{ text: 'ABC', lineBreak: true, kind: TraceKind.TextLine }]);
  });
  it('kind 1 before more data: the break goes at the end, reported', () => {
    const early = hex(
      '01 00 00 00 00 22  01 00 05 80 00 00 00 01  05 00 02 41 42  01 00 05 01 00 00 00 00  05 00 01 43  00 00 00',
    );
    const events = parseAll(early);
    expect(problems(events)).toMatchObject([{ code: 'line-break-not-last', action: 'normalize' }]);
    expect(messages(events)).toMatchObject([{ text: 'ABC', lineBreak: true, module: 0x8000 }]);
  });
  it('a trailing NUL is not shown', () => {
    const nul = hex('01 00 00 00 00 17  01 00 05 80 00 00 00 01  05 00 03 48 69 00  00 00 00');
    const [message] = messages(parseAll(nul));
    expect(message.text).toBe('Hi');
    expect(message.data).toEqual(hex('48 69 00'));
  });
  it('bytes after End, missing End, Trace Data before Attributes, no Trace Data: message dropped', () => {
    const cases: [string, string][] = [
      ['01 00 00 00 00 16  01 00 05 80 00 00 00 01  05 00 00  00 00 00  AA AA', 'bytes-after-end'],
      ['01 00 00 00 00 11  01 00 05 80 00 00 00 01  05 00 00', 'missing-end'],
      ['01 00 00 00 00 14  05 00 00  01 00 05 80 00 00 00 01  00 00 00', 'missing-attributes'],
      ['01 00 00 00 00 11  01 00 05 80 00 00 00 01  00 00 00', 'missing-trace-data'],
      ['01 00 00 00 00 14  01 00 05 80 00 00 00 01  05 00 09  00 00 00', 'parameter-overrun'],
    ];
    for (const [bytes, code] of cases) {
      const events = parseAll(hex(bytes), E7);
      expect(problems(events).map((problem) => [problem.code, problem.action])).toEqual([[code, 'drop-message']]);
      expect(messages(events)).toHaveLength(1);
    }
  });
});
