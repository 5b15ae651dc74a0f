import type { TraceRecord } from '@tracehub/contracts';
import { type PalmTraceMessage, PalmTraceParser } from '@tracehub/palmtrace';
import { qsRecordGroup } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { palmTraceSettingsFrom } from '../src/bridge-settings.js';
import { RecordMessageEncoder, rigNumber } from '../src/record-messages.js';

const hex = (s: string) => Uint8Array.from(s.split(/\s+/).filter(Boolean), (b) => Number.parseInt(b, 16));

function qsRecord(over: Partial<TraceRecord> = {}): TraceRecord {
  return {
    rig: 'rig4660',
    link: 'uart0',
    session: 's1',
    seq: 0,
    chunk: 0,
    protocol: 'qs',
    hostNs: '1764000000000000000',
    targetTs: '10000000',
    kind: 'record',
    type: 6,
    name: 'QS_QEP_TRAN',
    qs: { prio: 7 },
    fields: {},
    text: 'Hi',
    raw: '',
    ...over,
  };
}

function decode(bytes: Uint8Array | Uint8Array[]): PalmTraceMessage[] {
  const parser = new PalmTraceParser();
  const out: PalmTraceMessage[] = [];
  for (const b of Array.isArray(bytes) ? bytes : [bytes])
    parser.push(b, (e) => {
      if (e.type === 'message') out.push(e.message);
      else throw new Error(e.problem.description);
    });
  return out;
}

describe('record → PalmTrace message', () => {
  it('writes the spec E4 layout without Indentation: module 0x8000, pid, tid, time stamp in ms, text + line break', () => {
    // Spec §7 E4 with its Indentation parameter (02 00 01 03) taken out: length 0x2B.
    const expected = hex(`01 00 00 00 00 2B  01 00 05 80 00 00 00 01  03 00 04 00 00 12 34
      04 00 04 00 00 00 07  06 00 04 00 00 03 E8  05 00 02 48 69  00 00 00`);
    // rig4660 → Process ID 0x1234; prio 7; 10 000 000 ticks of 100 ns = 1000 ms.
    expect(new RecordMessageEncoder().encode(qsRecord())).toEqual(expected);
  });

  it('maps modules by name, QS group and STP master, and ids per protocol', () => {
    const encoder = new RecordMessageEncoder({
      modules: {
        default: 0x7000,
        names: { PHILO_STAT: 0x8001 },
        qsGroups: { AO: 0x0100 },
        stpMasters: { '12': 0x0500 },
      },
      rigNumbers: { benchA: 42 },
    });
    const [ao] = decode(encoder.encode(qsRecord({ type: 14 })) as Uint8Array);
    expect(ao.module).toBe(0x0100);
    const [user] = decode(encoder.encode(qsRecord({ type: 100, name: 'PHILO_STAT' })) as Uint8Array);
    expect(user.module).toBe(0x8001);
    const stp = qsRecord({
      rig: 'benchA',
      protocol: 'stp',
      stp: { master: 12, channel: 3 },
      qs: undefined,
      targetTs: '192000',
      name: 'STP_MESSAGE',
      fields: { data: 'deadbeef' },
    });
    const [m] = decode(encoder.encode(stp) as Uint8Array);
    expect(m).toMatchObject({ module: 0x0500, processId: 42, threadId: (12 << 16) | 3, timestamp: 10, text: 'Hi' });
    const [other] = decode(encoder.encode(qsRecord({ type: 48 })) as Uint8Array);
    expect(other.module).toBe(0x7000);
  });

  it("takes a link's own Process ID and module where the endpoint's tables do not name the record", () => {
    const linkIds = (rig: string, link: string) =>
      rig === 'rig4660' && link === 'uart0' ? { processId: 777, module: 0x0600 } : undefined;
    const plain = new RecordMessageEncoder({}, linkIds);
    const [a] = decode(plain.encode(qsRecord({ type: 48 })) as Uint8Array);
    expect([a.processId, a.module]).toEqual([777, 0x0600]);
    // Another link of the rig: the rig's number and the default module.
    const [b] = decode(plain.encode(qsRecord({ type: 48, link: 'uart1' })) as Uint8Array);
    expect([b.processId, b.module]).toEqual([0x1234, 0x8000]);
    // The endpoint's tables name records more precisely and win.
    const tables = new RecordMessageEncoder(
      { rigNumbers: { rig4660: 5 }, modules: { qsGroups: { AO: 0x0100 } } },
      linkIds,
    );
    const [c] = decode(tables.encode(qsRecord({ type: 14 })) as Uint8Array);
    expect([c.processId, c.module]).toEqual([5, 0x0100]);
    const [d] = decode(tables.encode(qsRecord({ type: 48 })) as Uint8Array);
    expect(d.module).toBe(0x0600);
  });

  it('sends STP payloads as binary (kind 2) when asked', () => {
    const encoder = new RecordMessageEncoder({ binaryStp: true });
    const stp = qsRecord({
      protocol: 'stp',
      stp: { master: 1, channel: 2 },
      qs: undefined,
      fields: { data: 'deadbeef' },
    });
    const [m] = decode(encoder.encode(stp) as Uint8Array);
    expect(m.kind).toBe(2);
    expect([...m.data]).toEqual([0xde, 0xad, 0xbe, 0xef]);
  });

  it('sends one message per line, nothing for empty text, and no Time stamp without a target time', () => {
    const encoder = new RecordMessageEncoder();
    expect(encoder.encode(qsRecord({ text: '' }))).toBeUndefined();
    const lines = decode(encoder.encode(qsRecord({ text: 'a\r\nb €\n', targetTs: null })) as Uint8Array[]);
    expect(lines.map((m) => [m.text, m.lineBreak, m.timestamp])).toEqual([
      ['a', true, null],
      ['b €', true, null],
    ]);
  });

  it('takes the time stamp modulo 2^32 ms', () => {
    const ms = 2 ** 32 + 5;
    const [m] = decode(new RecordMessageEncoder().encode(qsRecord({ targetTs: String(ms * 10_000) })) as Uint8Array);
    expect(m.timestamp).toBe(5);
  });

  it("stamps the unwrapped target time in ms by the link's tick rate, unless the endpoint gives ticks per ms", () => {
    // A 2-byte stamp after a wrap: its target time went on counting (0x10000 + 0x0010 ticks).
    const wrapped = qsRecord({ targetTs: '16', targetTime: String(0x10000 + 16) });
    const linkIds = () => ({ tickRate: 10_000 });
    const [byLink] = decode(new RecordMessageEncoder({}, linkIds).encode(wrapped) as Uint8Array);
    expect(byLink.timestamp).toBe(Math.floor((0x10000 + 16) / 10));
    const [byEndpoint] = decode(
      new RecordMessageEncoder({ targetTicksPerMs: { qs: 1 } }, linkIds).encode(wrapped) as Uint8Array,
    );
    expect(byEndpoint.timestamp).toBe(0x10000 + 16);
    // Neither: the protocol's default (10 000 ticks per ms for QS).
    const [byDefault] = decode(new RecordMessageEncoder().encode(qsRecord({ targetTs: '30000' })) as Uint8Array);
    expect(byDefault.timestamp).toBe(3);
  });

  it('numbers rigs by map, trailing digits, or a stable hash', () => {
    expect(rigNumber('rig7')).toBe(7);
    expect(rigNumber('bench-012')).toBe(12);
    expect(rigNumber('lab', { lab: 9 })).toBe(9);
    expect(rigNumber('lab')).toBe(rigNumber('lab'));
    expect(rigNumber('lab')).not.toBe(rigNumber('lac'));
  });

  it('groups QS records as the spec table does', () => {
    expect(
      [1, 9, 14, 19, 24, 32, 28, 48, 71, 75, 100, 59].map((type) => qsRecordGroup({ kind: 'record', type })),
    ).toEqual(['SM', 'SM', 'AO', 'EQ', 'MP', 'TE', 'QF', 'SC', 'SEM', 'MTX', 'USER', 'TEST']);
    expect(qsRecordGroup({ kind: 'dict', type: 61 })).toBe('DICT');
  });
});

describe('bridge settings', () => {
  const base = {
    PALMTRACE_REPORTERS: '[]',
    PALMTRACE_LISTEN_PORT: '',
    PALMTRACE_LISTEN_HOST: '127.0.0.1',
    PALMTRACE_LISTEN_OPTIONS: '{}',
    PALMTRACE_QUEUE: 500,
    PALMTRACE_LEASE_MS: 5000,
  };

  it('reads endpoints and the listening port', () => {
    const s = palmTraceSettingsFrom({
      ...base,
      PALMTRACE_REPORTERS: '[{"host":"lab-pc","port":6000,"filter":{"links":["uart0"]},"modules":{"default":32768}}]',
      PALMTRACE_LISTEN_PORT: '6001',
    });
    expect(s.reporters[0]).toMatchObject({ host: 'lab-pc', port: 6000 });
    expect([s.listenPort, s.queueRecords]).toEqual([6001, 500]);
    expect(palmTraceSettingsFrom(base).listenPort).toBeUndefined();
  });

  it('says clearly what is wrong', () => {
    expect(() => palmTraceSettingsFrom({ ...base, PALMTRACE_REPORTERS: '[{' })).toThrow(
      /PALMTRACE_REPORTERS is not valid JSON/,
    );
    expect(() => palmTraceSettingsFrom({ ...base, PALMTRACE_REPORTERS: '[{"host":"x","port":0}]' })).toThrow(
      /PALMTRACE_REPORTERS\[0\]\.port/,
    );
    expect(() =>
      palmTraceSettingsFrom({
        ...base,
        PALMTRACE_REPORTERS: '[{"host":"x","port":1,"replay":{"from":"2025-01-01T00:00:00Z"}}]',
      }),
    ).toThrow(/needs both from and to/);
    expect(() => palmTraceSettingsFrom({ ...base, PALMTRACE_LISTEN_OPTIONS: '{"encoding":"ebcdic"}' })).toThrow(
      /PALMTRACE_LISTEN_OPTIONS\.encoding/,
    );
  });
});
