/// <reference lib="dom" />
// Issue 36: value plots of a real capture in Chromium. dpp_qv's PHILO_STAT records (a user
// record: U8 philosopher number, then a string) and the free entries of the queues its posts
// report (QS_QF_ACTIVE_POST `free`), on one chart over target time; the choice in the URL. What
// each pixel column must show is worked out here from the stored records themselves.
import { join } from 'node:path';
import type { TraceRecord } from '@tracehub/contracts';
import { upsertLink } from '@tracehub/db';
import { T0 } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';

let dashboard: DashboardOnBackends;
let page: Page;
let base: string;
let records: TraceRecord[] = [];

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('valueplot', {
    folder: 'dashboard-dist-value-plot',
    height: 900,
    seed: async ({ db }) => {
      ({ records } = await storeQsFixture(db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's-dpp', startNs: T0 }));
      // The POSIX port stamps in units of 100 ns.
      await upsertLink(db, { rig: 'rig1', name: 'uart0', protocol: 'qs', settings: { tickRate: 10_000_000 } });
    },
  });
  ({ base, page } = dashboard);
  await dashboard.signIn(READ_TOKEN, '/fleet');
});

afterAll(() => dashboard?.close());

/** Per pixel column of [from, to), the [max, min] of `value` of the records named `name`. */
function expectedColumns(name: string, value: (r: TraceRecord) => number, from: bigint, to: bigint, columns: number) {
  const max: Array<number | null> = new Array(columns).fill(null);
  const min: Array<number | null> = new Array(columns).fill(null);
  for (const r of records) {
    const time = r.targetTime ?? r.targetTs;
    if (r.name !== name || time === undefined || time === null) continue;
    const t = BigInt(time);
    if (t < from || t >= to) continue;
    const c = Number(((t - from) * BigInt(columns)) / (to - from));
    const v = value(r);
    max[c] = max[c] === null ? v : Math.max(max[c] as number, v);
    min[c] = min[c] === null ? v : Math.min(min[c] as number, v);
  }
  return [max, min];
}

/** What the chart draws: its uPlot's data (x, then max and min of each series). */
const plotData = () =>
  page.evaluate(() => (document.querySelector('#value-plot') as HTMLElement & { plot: { data: unknown } }).plot.data);

describe('value plots in Chromium', () => {
  it('plots two fields of the session over target time, each column its min and max, the choice in the URL', async () => {
    await page.goto(`${base}/#/session/s-dpp`);
    await page.locator('nav.tabs a', { hasText: 'Value plots' }).click();
    await page.locator('#plot-name').fill('PHILO_STAT');
    await page.locator('#plot-field').fill('values.0');
    await page.locator('button', { hasText: 'Add series' }).click();
    await page.locator('#plot-name').fill('QS_QF_ACTIVE_POST');
    await page.locator('#plot-field').fill('free');
    await page.locator('button', { hasText: 'Add series' }).click();
    await page.waitForFunction(() => {
      const box = document.querySelector('#value-plot') as HTMLElement & { plot?: { series: unknown[] } };
      return box.plot !== undefined && box.plot.series.length === 5;
    });
    expect(decodeURIComponent(page.url())).toContain('series=PHILO_STAT:values.0&series=QS_QF_ACTIVE_POST:free');
    const box = page.locator('#value-plot');
    const from = BigInt((await box.getAttribute('data-from')) as string);
    const to = BigInt((await box.getAttribute('data-to')) as string);
    const data = (await plotData()) as Array<Array<number | null>>;
    const columns = data[0].length;
    const philo = expectedColumns(
      'PHILO_STAT',
      (r) => Number((r.fields as { values: number[] }).values[0]),
      from,
      to,
      columns,
    );
    const free = expectedColumns('QS_QF_ACTIVE_POST', (r) => Number(r.fields.free), from, to, columns);
    expect(data.slice(1)).toEqual([...philo, ...free]);
    expect(Number(await box.getAttribute('data-points'))).toBe(
      records.filter((r) => r.name === 'PHILO_STAT' || r.name === 'QS_QF_ACTIVE_POST').length,
    );
    // The axis is in seconds: the link's tick rate.
    expect(data[0][0]).toBeCloseTo(Number(from) / 1e7, 9);
    expect(await page.locator('#plot-status').textContent()).toMatch(/ s of target time/);
    await page.screenshot({ path: join(screenshotsDir, 'value-plot.png'), fullPage: true });

    // Reloaded from its URL, the page draws the same.
    await page.reload();
    await page.waitForFunction(
      () => (document.querySelector('#value-plot') as HTMLElement & { plot?: unknown }).plot !== undefined,
    );
    expect(await plotData()).toEqual(data);
  });

  it('zooms to a stretch selected on the chart, with exact columns of that stretch', async () => {
    const box = page.locator('#value-plot');
    const over = page.locator('#value-plot .u-over');
    const area = (await over.boundingBox())!;
    await page.mouse.move(area.x + area.width * 0.25, area.y + 20);
    await page.mouse.down();
    await page.mouse.move(area.x + area.width * 0.6, area.y + 20, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.url()).toMatch(/&from=\d+&to=\d+/);
    const url = new URL(page.url().replace('#/', ''));
    const from = BigInt(url.searchParams.get('from') as string);
    const to = BigInt(url.searchParams.get('to') as string);
    await expect.poll(async () => box.getAttribute('data-from')).toBe(String(from));
    const data = (await plotData()) as Array<Array<number | null>>;
    const philo = expectedColumns(
      'PHILO_STAT',
      (r) => Number((r.fields as { values: number[] }).values[0]),
      from,
      to,
      data[0].length,
    );
    expect(data.slice(1, 3)).toEqual(philo);
    await page.screenshot({ path: join(screenshotsDir, 'value-plot-zoomed.png'), fullPage: true });
  });
});
