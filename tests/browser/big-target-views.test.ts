/// <reference lib="dom" />
// Issue 36, "Done when": big_stress (1.2 M records) on the target's clock and its state machines,
// in the dashboard. The capture is replayed through the pipeline with the fmt app's tick rate
// (100 ns) as the replay's link setting, so the timeline's axis is in seconds. The timeline is
// opened at `#/timeline?session=...&axis=target` (the whole target segment), then at a 1 ms
// window at its middle, then at a 20 µs window there, which holds few enough records to draw one
// by one; each view's record count is checked against the stored records' target times, counted
// here. Then the session's state machines are drawn from the addresses in its records. Each
// step is timed and printed (the api's own times: bench/target-views.bench.ts).
import { join } from 'node:path';
import { sessionRecords } from '@tracehub/db';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { type StoredBigStress, storeBigStress } from '../support/big-stress-session.js';
import { type ServedDashboard, screenshotsDir, serveDashboard } from '../support/served-dashboard.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';

const TICK_RATE = 10_000_000;

let backends: TestBackends;
let big: StoredBigStress | undefined;
let dashboard: ServedDashboard;
let page: Page;
/** Target time (ticks) of every record of segment 0, in seq order. */
const ticks: number[] = [];
/** QEP records with an object. */
let qepRecords = 0;
/** The states the QEP records name (their handlers' addresses, as qspy prints them: 8 hex digits at least). */
const stateNames = new Set<string>();
const address = (v: unknown) => `0x${BigInt(String(v)).toString(16).toUpperCase().padStart(8, '0')}`;

/** The api's share of the last `timeUntil`: each request's duration, ms, as the page saw it. */
let apiMs: number[] = [];

/** Milliseconds from going to `hash` until `ready` holds in the page. */
async function timeUntil(hash: string, ready: string): Promise<number> {
  const { ms, api } = await page.evaluate(
    async ({ hash, ready }) => {
      performance.clearResourceTimings();
      const t0 = performance.now();
      location.hash = hash;
      await new Promise<void>((resolve) => {
        const check = () => {
          if (document.querySelector(ready) !== null) resolve();
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      });
      const ms = performance.now() - t0;
      const api = performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/api/v1/'))
        .map((e) => Math.round(e.duration));
      return { ms, api };
    },
    { hash, ready },
  );
  apiMs = api;
  return ms;
}

beforeAll(async () => {
  backends = await testBackends('bigtargetviews', { topology: true });
  const started = performance.now();
  big = await storeBigStress(backends, 'rigbig', 'uart0', ['--tick-rate', String(TICK_RATE)]);
  console.log(`big_stress: ${big.records} records stored in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for await (const r of sessionRecords(backends.db, big.session)) {
    // Written only where it differs from the stamp (`targetTimeOf`).
    const t = r.target_time ?? r.target_ts;
    if (t !== null && (r.target_segment ?? 0) === 0) ticks.push(Number(t));
    if (r.name.startsWith('QS_QEP_') && r.qs_obj !== null) {
      qepRecords++;
      const f = r.fields as Record<string, unknown>;
      // A transition's source is a state unless it is the top state of an initial transition.
      for (const k of ['state', 'target', ...(r.name === 'QS_QEP_STATE_INIT' ? [] : ['source'])])
        if (f[k] !== undefined && f[k] !== null) stateNames.add(address(f[k]));
    }
  }
  dashboard = await serveDashboard('dashboard-dist-big-target-views', backends, { height: 900 });
  page = dashboard.page;
  await dashboard.signIn(READ_TOKEN, '/sessions');
  await page.locator(`#sessions tr[data-session="${big.session}"]`).waitFor();
}, 900_000);

afterAll(async () => {
  for (const open of [dashboard, big, backends]) await open?.close();
});

/** Records of segment 0 with a target time in `[from, to)`, counted from the records. */
const held = (from: number, to: number) => ticks.filter((t) => t >= from && t < to).length;

describe('big_stress on the target clock and its state machines (1.2 M records)', { timeout: 600_000 }, () => {
  it('draws the whole target segment, a 1 ms window and a 20 µs window with the counts the records give', async () => {
    const session = big!.session;
    const canvas = page.locator('#timeline');
    const ready = '#timeline[data-state=ready][data-axis=target]';
    const whole = await timeUntil(`#/timeline?session=${session}&axis=target`, ready);
    const wholeApi = apiMs;
    const [from, to] = [Number(await canvas.getAttribute('data-from')), Number(await canvas.getAttribute('data-to'))];
    expect(from).toBe(ticks.reduce((a, b) => Math.min(a, b)));
    expect(to).toBe(ticks.reduce((a, b) => Math.max(a, b)) + 1);
    expect(await canvas.getAttribute('data-mode')).toBe('buckets');
    expect(Number(await canvas.getAttribute('data-records'))).toBe(ticks.length);
    expect(await page.locator('#timeline-status').textContent()).toContain(
      `${ticks.length.toLocaleString('en')} records`,
    );
    await page.screenshot({ path: join(screenshotsDir, 'big-target-timeline-whole.png') });
    // Once more from another page: the api and the page have drawn it once.
    await timeUntil('#/sessions', '#sessions');
    const again = await timeUntil(`#/timeline?session=${session}&axis=target`, ready);
    const againApi = apiMs;

    const mid = Math.floor((from + to) / 2);
    const oneMs = TICK_RATE / 1000;
    // Opening a window's URL draws the whole segment first, then the window: timed to the window.
    const zoom = await timeUntil(
      `#/timeline?session=${session}&axis=target&from=${mid}&to=${mid + oneMs}`,
      `${ready}[data-from="${mid}"][data-to="${mid + oneMs}"]`,
    );
    expect(Number(await canvas.getAttribute('data-to')) - Number(await canvas.getAttribute('data-from'))).toBe(oneMs);
    expect(Number(await canvas.getAttribute('data-records'))).toBe(held(mid, mid + oneMs));
    await page.screenshot({ path: join(screenshotsDir, 'big-target-timeline-1ms.png') });

    // 20 µs from the first record at or after the middle (the records come in bursts).
    const few = 200;
    const start = ticks.find((t) => t >= mid)!;
    const single = await timeUntil(
      `#/timeline?session=${session}&axis=target&from=${start}&to=${start + few}`,
      `${ready}[data-from="${start}"][data-to="${start + few}"]`,
    );
    expect(await canvas.getAttribute('data-mode')).toBe('detail');
    expect(Number(await canvas.getAttribute('data-records'))).toBe(held(start, start + few));
    expect(held(start, start + few)).toBeGreaterThan(0);
    await page.screenshot({ path: join(screenshotsDir, 'big-target-timeline-20us.png') });
    console.log(
      `big_stress target timeline: whole segment ${whole.toFixed(0)} ms (${ticks.length} records; requests ${wholeApi.join(', ')} ms; ${again.toFixed(0)} ms again, requests ${againApi.join(', ')} ms), ` +
        `a 1 ms window's URL ${zoom.toFixed(0)} ms (${held(mid, mid + oneMs)} records), a 20 µs window's URL ${single.toFixed(0)} ms (${held(start, start + few)} records)`,
    );
  });

  it('draws the state machines from the addresses in the records', async () => {
    const session = big!.session;
    const ms = await timeUntil(`#/session/${session}?view=states`, '#state-machine svg g.state');
    const states = await page.locator('#state-machine svg g.state').count();
    expect(stateNames.size).toBeGreaterThan(0);
    expect(states).toBe(stateNames.size);
    const names = await page
      .locator('#state-machine svg g.state')
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')));
    expect(new Set(names)).toEqual(stateNames);
    expect(await page.locator('#sm-status').count()).toBe(0);
    await page.screenshot({ path: join(screenshotsDir, 'big-state-machines.png') });
    console.log(
      `big_stress state machines: drawn in ${ms.toFixed(0)} ms (${qepRecords} QEP records, ${states} states)`,
    );
  });
});
