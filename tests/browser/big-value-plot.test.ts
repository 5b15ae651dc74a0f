/// <reference lib="dom" />
// Issue 36, "Done when": target time and value plots on big_stress (1.2 M records, 300 000 of
// them the user record APP_MIX: U32, U16, I32, STR, F32), replayed through the pipeline with the
// link's tick rate given as the replay's link setting (`--tick-rate`: the fmt app's POSIX port
// stamps in units of 100 ns). The api's target segments are checked against the stored records'
// stamps, the chart's columns against the records' values, and the timings are printed.
import { join } from 'node:path';
import type { SeriesReply, SessionTargetTime } from '@tracehub/api-contract';
import { sessionRecords } from '@tracehub/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { type StoredBigStress, storeBigStress } from '../support/big-stress-session.js';
import { type ServedDashboard, screenshotsDir, serveDashboard } from '../support/served-dashboard.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';

const TICK_RATE = 10_000_000;

let backends: TestBackends;
let big: StoredBigStress | undefined;
let dashboard: ServedDashboard;
/** Of every APP_MIX record: its seq, raw stamp, target time and values. */
const mix: Array<{ seq: number; stamp: bigint; ticks: bigint; values: unknown[] }> = [];
/** Every raw stamp of the session, in seq order. */
const stamps: bigint[] = [];

/** `GET path` of the api the page talks to, timed (ms). */
async function timed<T>(path: string): Promise<{ body: T; ms: number }> {
  const t0 = performance.now();
  const res = await dashboard.app.inject({ url: `/api/v1${path}`, headers: { authorization: `Bearer ${READ_TOKEN}` } });
  const ms = performance.now() - t0;
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.json() as T, ms };
}

beforeAll(async () => {
  backends = await testBackends('bigvalueplot', { topology: true });
  const started = performance.now();
  big = await storeBigStress(backends, 'rigbig', 'uart0', ['--tick-rate', String(TICK_RATE)]);
  console.log(`big_stress: ${big.records} records stored in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for await (const r of sessionRecords(backends.db, big.session)) {
    if (r.target_ts !== null) stamps.push(BigInt(r.target_ts));
    if (r.name === 'APP_MIX') {
      mix.push({
        seq: Number(r.seq),
        stamp: BigInt(r.target_ts as string),
        // Written only where it differs from the stamp (`targetTimeOf`).
        ticks: BigInt((r.target_time ?? r.target_ts) as string),
        values: (r.fields as { values: unknown[] }).values,
      });
    }
  }
  dashboard = await serveDashboard('dashboard-dist-big-value-plot', backends, { height: 900 });
  await dashboard.signIn(READ_TOKEN, '/fleet');
}, 600_000);

afterAll(async () => {
  // The page and the api, then the pipeline's services, then the database and the bus.
  for (const open of [dashboard, big, backends]) await open?.close();
});

// Each view reads the whole session (1.2 M records) on a machine shared with others: minutes, not the default minute.
describe('big_stress on target time (1.2 M records)', { timeout: 300_000 }, () => {
  it('has one segment whose target time is its 4-byte stamps unwrapped, in seconds by the tick rate', async () => {
    const session = big!.session;
    // The stamps, unwrapped as a 32-bit counter (QS_TIME_SIZE 4) by the spec's rule.
    let wraps = 0n;
    const first = stamps[0];
    let last = first;
    for (let i = 1; i < stamps.length; i++) {
      if (stamps[i] < stamps[i - 1]) wraps += 1n << 32n;
      last = stamps[i] + wraps;
    }
    const { body, ms } = await timed<SessionTargetTime>(`/sessions/${session}/target-time`);
    expect(body.unit).toBe('s');
    expect(body.tickRate).toBe(TICK_RATE);
    expect(body.segments.map((s) => [s.segment, s.firstTicks, s.lastTicks])).toEqual([
      [0, String(first), String(last)],
    ]);
    // The stored records' target time of APP_MIX: their stamps with the wraps before them.
    for (let i = 1; i < mix.length; i++) expect(mix[i].ticks).toBeGreaterThanOrEqual(mix[i - 1].ticks);
    console.log(
      `big_stress target-time: ${body.segments[0].records} timed records, ${(body.segments[0].lastSeconds! - body.segments[0].firstSeconds!).toFixed(3)} s of target time, ${wraps >> 32n} wraps; GET /target-time ${ms.toFixed(0)} ms`,
    );
  });

  it('plots APP_MIX fields over the whole session, each pixel column the min and max of its records', async () => {
    const session = big!.session;
    const page = dashboard.page;
    const t0 = Date.now();
    await page.goto(
      `${dashboard.base}/#/plot?session=${session}&series=APP_MIX:values.0&series=APP_MIX:values.2&series=APP_MIX:values.4`,
    );
    await page.waitForFunction(
      () => (document.querySelector('#value-plot') as HTMLElement & { plot?: unknown }).plot !== undefined,
      undefined,
      { timeout: 240_000 },
    );
    const drawnMs = Date.now() - t0;
    const box = page.locator('#value-plot');
    const from = BigInt((await box.getAttribute('data-from')) as string);
    const to = BigInt((await box.getAttribute('data-to')) as string);
    const data = (await page.evaluate(
      () => (document.querySelector('#value-plot') as HTMLElement & { plot: { data: unknown } }).plot.data,
    )) as Array<Array<number | null>>;
    const columns = data[0].length;
    expect(Number(await box.getAttribute('data-points'))).toBe(mix.length * 3);
    // Each series' max and min per column, from the records.
    const expected: Array<Array<number | null>> = [];
    for (const arg of [0, 2, 4]) {
      const max: Array<number | null> = new Array(columns).fill(null);
      const min: Array<number | null> = new Array(columns).fill(null);
      for (const r of mix) {
        const c = Number(((r.ticks - from) * BigInt(columns)) / (to - from));
        const v = Number(r.values[arg]);
        max[c] = max[c] === null ? v : Math.max(max[c] as number, v);
        min[c] = min[c] === null ? v : Math.min(min[c] as number, v);
      }
      expected.push(max, min);
    }
    expect(data.slice(1)).toEqual(expected);
    await page.screenshot({ path: join(screenshotsDir, 'big-value-plot.png'), fullPage: true });

    const series = await timed<SeriesReply>(`/sessions/${session}/series?series=APP_MIX:values.0&columns=${columns}`);
    expect(series.body.series[0].points).toBe(mix.length);
    console.log(
      `big_stress value plot: 3 series of ${mix.length} values in ${columns} columns drawn in ${drawnMs} ms (page open to chart, one GET /series of the three); GET /series of one ${series.ms.toFixed(0)} ms`,
    );
  });
});
