// Issue 36: value plots. A numeric field of a user record over target time, cut into pixel
// columns by the api; each column's count, min, max, first and last are checked against the
// stored records themselves (their target time and field), read back through the records api.
import type { SeriesReply } from '@tracehub/api-contract';
import { type TraceRecord, targetTimeOf } from '@tracehub/contracts';
import { upsertLink } from '@tracehub/db';
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;
const auth = { authorization: `Bearer ${READ_TOKEN}` };
const get = (url: string) => api.app.inject({ url, headers: auth });

/** The stored records of a session named `name`, from the records api. */
async function recordsNamed(session: string, name: string): Promise<TraceRecord[]> {
  const res = await get(`/api/v1/records?session=${session}&name=${name}&order=asc&limit=1000`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { records: TraceRecord[] }).records;
}

/** The value of a user record's argument `i`, as a number. */
const arg = (r: TraceRecord, i: number) => Number((r.fields as { values: unknown[] }).values[i]);

beforeAll(async () => {
  api = await testApi('series');
  // 2-byte stamps that wrap: the series' time axis is the unwrapped one.
  await storeQsFixture(api.db, 'fmt_v32s', { rig: 'rig1', link: 'uart0', session: 's-fmt', startNs: T0 });
  await storeQsFixture(api.db, 'dpp_qv', { rig: 'rig1', link: 'uart1', session: 's-dpp', startNs: T0 });
  await upsertLink(api.db, { rig: 'rig1', name: 'uart1', protocol: 'qs', settings: { tickRate: 10_000_000 } });
});

afterAll(() => api?.close());

describe('GET /api/v1/sessions/{id}/series', () => {
  it("gives each pixel column the count, min, max, first and last of the records' values", async () => {
    const records = await recordsNamed('s-fmt', 'APP_STEP');
    expect(records.length).toBe(20);
    const res = await get('/api/v1/sessions/s-fmt/series?series=APP_STEP:values.0&columns=7');
    expect(res.statusCode, res.body).toBe(200);
    const reply = res.json() as SeriesReply;
    const series = reply.series[0];
    const from = BigInt(targetTimeOf(records[0]) as string);
    const to = BigInt(targetTimeOf(records[records.length - 1]) as string) + 1n;
    expect([reply.fromTicks, reply.toTicks]).toEqual([String(from), String(to)]);
    expect([series.name, series.field]).toEqual(['APP_STEP', 'values.0']);
    expect(series.points).toBe(20);
    expect(series.skipped).toBe(0);
    // Each column from the records themselves: those whose time is in [from + c*span/7, ...).
    const span = Number(to - from);
    const expected = new Map<number, number[]>();
    for (const r of records) {
      const c = Math.floor((Number(BigInt(targetTimeOf(r) as string) - from) * 7) / span);
      expected.set(c, [...(expected.get(c) ?? []), arg(r, 0)]);
    }
    expect(series.columns.map((c) => [c.column, c.count, c.min, c.max, c.first, c.last])).toEqual(
      [...expected].map(([c, v]) => [c, v.length, Math.min(...v), Math.max(...v), v[0], v[v.length - 1]]),
    );
    expect(series.min).toBe(Math.min(...records.map((r) => arg(r, 0))));
    expect(series.max).toBe(Math.max(...records.map((r) => arg(r, 0))));
  });

  it('windows by seconds with the tick rate, and exports every value as CSV', async () => {
    const records = await recordsNamed('s-dpp', 'PHILO_STAT');
    const times = records.map((r) => BigInt(targetTimeOf(r) as string));
    const from = times[5];
    const to = times[15];
    const inWindow = records.filter((_, i) => times[i] >= from && times[i] < to);
    const res = await get(
      `/api/v1/sessions/s-dpp/series?series=PHILO_STAT:values.0&unit=s&from=${Number(from) / 1e7}&to=${Number(to) / 1e7}&columns=1`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const reply = res.json() as SeriesReply;
    expect(reply.unit).toBe('s');
    const series = reply.series[0];
    expect(series.columns).toHaveLength(1);
    expect(series.columns[0].count).toBe(inWindow.length);
    expect(series.columns[0].min).toBe(Math.min(...inWindow.map((r) => arg(r, 0))));
    expect(series.columns[0].max).toBe(Math.max(...inWindow.map((r) => arg(r, 0))));

    const csv = await get('/api/v1/sessions/s-dpp/series/export?series=PHILO_STAT:values.0');
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('series,seq,target_ticks,target_s,value');
    expect(lines.slice(1)).toEqual(
      records.map(
        (r) =>
          `"PHILO_STAT:values.0",${r.seq},${targetTimeOf(r)},${Number(BigInt(targetTimeOf(r) as string)) / 1e7},${arg(r, 0)}`,
      ),
    );
  });

  it('reads several series in one pass, on one window: from the first value of any to just after the last of any', async () => {
    const philo = await recordsNamed('s-dpp', 'PHILO_STAT');
    const posts = await recordsNamed('s-dpp', 'QS_QF_ACTIVE_POST');
    const res = await get(
      '/api/v1/sessions/s-dpp/series?series=PHILO_STAT:values.0&series=QS_QF_ACTIVE_POST:free&columns=50',
    );
    expect(res.statusCode, res.body).toBe(200);
    const reply = res.json() as SeriesReply;
    const times = [...philo, ...posts]
      .map((r) => BigInt(targetTimeOf(r) as string))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const from = times[0];
    const to = times[times.length - 1] + 1n;
    expect([reply.fromTicks, reply.toTicks, reply.columns]).toEqual([String(from), String(to), 50]);
    expect(reply.series.map((s) => [s.name, s.field, s.points])).toEqual([
      ['PHILO_STAT', 'values.0', philo.length],
      ['QS_QF_ACTIVE_POST', 'free', posts.length],
    ]);
    expect(reply.series[1].max).toBe(Math.max(...posts.map((r) => Number(r.fields.free))));
    expect(reply.series[1].min).toBe(Math.min(...posts.map((r) => Number(r.fields.free))));
  });

  it('counts values that are not numbers as skipped, and refuses a bad series', async () => {
    const text = (await get('/api/v1/sessions/s-dpp/series?series=PHILO_STAT:values.1')).json() as SeriesReply;
    expect(text.series[0].points).toBe(0);
    expect(text.series[0].skipped).toBe(20);
    expect(text.series[0].columns).toEqual([]);
    expect((await get('/api/v1/sessions/s-dpp/series?series=PHILO_STAT:values..1')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/s-dpp/series?series=PHILO_STAT')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/s-dpp/series')).statusCode).toBe(400);
  });
});
