// The Perfetto (Chrome JSON trace) export of a real capture, checked against qspy's text of it.
import { readFileSync } from 'node:fs';
import { upsertLink } from '@tracehub/db';
import { qspyLines, T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../support/paths.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;

interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  cat?: string;
  args?: Record<string, unknown>;
}

beforeAll(async () => {
  api = await testApi('perfetto');
  const { db } = api;
  await storeQsFixture(db, 'dpp_qv', { rig: 'rig17', link: 'uart0', session: 's-dpp', startNs: T0 });
  // 2-byte stamps that wrap, sent twice as a target that resets and runs again, on a link
  // whose tick rate is known (the fmt app's POSIX port: 100 ns).
  const capture = readFileSync(fixturePath('qs', 'fmt_v32s.qs'));
  await storeQsFixture(db, 'fmt_v32s', {
    rig: 'rig17',
    link: 'uart1',
    session: 's-reset',
    startNs: T0,
    bytes: new Uint8Array(Buffer.concat([capture, capture])),
  });
  await upsertLink(db, { rig: 'rig17', name: 'uart1', protocol: 'qs', settings: { tickRate: 10_000_000 } });
});

afterAll(() => api?.close());

/** qspy's lines of a capture as [timestamp, what, rest]. */
function qspyRecords(name: string): Array<{ ts: number | null; what: string; line: string }> {
  return qspyLines(name).map((line) => {
    const tokens = line.trim().split(/\s+/);
    const stamped = /^\d+$/.test(tokens[0]);
    const what = stamped || tokens[0] === '===RTC===>' ? tokens[1] : tokens[0];
    return { ts: stamped ? Number(tokens[0]) : null, what, line };
  });
}

describe('perfetto export', () => {
  it('exports dpp_qv as a valid trace: one track per active object, its states as slices', async () => {
    const res = await api.app.inject({
      url: '/api/v1/sessions/s-dpp/export?format=perfetto',
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toContain('s-dpp.trace.json');
    const trace = JSON.parse(res.body) as { traceEvents: TraceEvent[] };
    const events = trace.traceEvents;
    for (const e of events) {
      expect(['M', 'X', 'i', 'C']).toContain(e.ph);
      expect(typeof e.pid).toBe('number');
      if (e.ph !== 'M') expect(Number.isFinite(e.ts)).toBe(true);
    }
    // The active objects, as qspy names them in the state machines' records.
    const lines = qspyRecords('dpp_qv');
    const objOf = (line: string) => /Obj=([^,]+)/.exec(line)?.[1];
    const aos = new Set(
      lines.filter((l) => ['Init===>', '===>Tran', 'Disp===>', 'St-Entry'].includes(l.what)).map((l) => objOf(l.line)!),
    );
    expect(aos).toEqual(
      new Set(['Philo_inst[0]', 'Philo_inst[1]', 'Philo_inst[2]', 'Philo_inst[3]', 'Philo_inst[4]', 'Table_inst']),
    );
    const threads = events.filter((e) => e.ph === 'M' && e.name === 'thread_name');
    const trackNames = threads.map((t) => t.args?.name as string);
    // One track per active object (and one for the link's own records), each once.
    expect(new Set(trackNames).size).toBe(trackNames.length);
    expect(trackNames.filter((n) => !n.endsWith('(link)')).sort()).toEqual([...aos].sort());
    const tidOf = new Map(threads.map((t) => [t.args?.name as string, t.tid]));
    // Each object's slices are the states qspy shows it entering, from that record's timestamp
    // to the next one's.
    for (const ao of aos) {
      const entered = lines
        .filter((l) => (l.what === 'Init===>' || l.what === '===>Tran') && objOf(l.line) === ao)
        .map((l) => ({ ts: l.ts!, state: /State=(?:[^,]*->)?([^,>]+)$/.exec(l.line)![1] }));
      const slices = events.filter((e) => e.ph === 'X' && e.tid === tidOf.get(ao)).sort((a, b) => a.ts! - b.ts!);
      expect(slices.map((s) => s.name)).toEqual(entered.map((e) => e.state));
      expect(slices.map((s) => s.ts)).toEqual(entered.map((e) => e.ts));
      for (let i = 0; i + 1 < slices.length; i++) expect(slices[i].ts! + slices[i].dur!).toBe(slices[i + 1].ts);
    }
    // Events as instants, on their object's track: every dispatch qspy shows.
    const dispatches = events.filter((e) => e.ph === 'i' && e.name.startsWith('DISPATCH '));
    expect(dispatches).toHaveLength(lines.filter((l) => l.what === 'Disp===>').length);
    // Counters: the event pool's free blocks.
    expect(events.some((e) => e.ph === 'C' && e.name === 'EvtPool1 free')).toBe(true);
  });

  it('places events at the target time in real µs: stamps unwrapped, a reset after the run before it', async () => {
    const res = await api.app.inject({
      url: '/api/v1/sessions/s-reset/export?format=perfetto',
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    const events = (JSON.parse(res.body) as { traceEvents: TraceEvent[] }).traceEvents;
    // The stamps qspy printed, unwrapped as a 16-bit counter; the second run starts just after the first.
    const printed = qspyLines('fmt_v32s')
      .map((line) => /^(\d{10}) /.exec(line))
      .filter((m) => m !== null)
      .map((m) => BigInt(m[1]));
    const unwrapped = printed.map((_, i) => {
      let t = printed[0];
      for (let j = 1; j <= i; j++) t += (printed[j] - printed[j - 1] + 0x10000n) % 0x10000n;
      return t;
    });
    expect(unwrapped[unwrapped.length - 1]).toBeGreaterThan(0xffffn);
    const offset = unwrapped[unwrapped.length - 1] + 1n - unwrapped[0];
    const us = (ticks: bigint) => Number(ticks) * (1e6 / 10_000_000);
    const expected = new Set([...unwrapped.map(us), ...unwrapped.map((t) => us(t + offset))]);
    // Events on the target's clock (records before the first stamp are at their host time, 1e15 µs and more).
    const timed = events.filter((e) => e.ph === 'i' && e.ts! < 1e12);
    expect(timed.length).toBeGreaterThan(10);
    for (const e of timed) expect(expected.has(e.ts!), String(e.ts)).toBe(true);
    for (let i = 1; i < timed.length; i++) expect(timed[i].ts!).toBeGreaterThanOrEqual(timed[i - 1].ts!);
    expect(timed.some((e) => e.ts! >= us(unwrapped[0] + offset))).toBe(true);
    expect(timed.some((e) => e.ts! <= us(unwrapped[unwrapped.length - 1]))).toBe(true);
  });
});
