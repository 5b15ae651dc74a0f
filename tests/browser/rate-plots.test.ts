/// <reference lib="dom" />
// Issue 17's plots in Chromium: the fleet page's records/s per link (the last hour unless the
// URL names a range) and a link page's records/s, errors and gaps, drawn by uPlot from `/rates`.
// Block summaries with chosen counts are stored; what each plot should draw is worked out from
// them (`expectedRates`) and compared with the data the page handed uPlot, not with pixels.
import { join } from 'node:path';
import { upsertLink } from '@tracehub/db';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { type BlockSummary, expectedRates, storeBlockSummaries } from '../support/block-summaries.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';

let dashboard: DashboardOnBackends;
let page: Page;
let base: string;
let uart0Id: number;
let freshId: number;

const S = 1_000_000_000n;
const MINUTE = 60n * S;
/** Whole minutes, so the blocks sit well inside "the last hour" whenever the page loads. */
const NOW = (BigInt(Date.now()) / 60_000n) * 60_000n * 1_000_000n;
const blocks: BlockSummary[] = [];

/** What the page gave uPlot: the series' labels and, per series, the values (x first, in s). */
interface DrawnPlot {
  labels: string[];
  data: number[][];
}

async function drawnPlot(id: string): Promise<DrawnPlot> {
  await page.locator(`#${id} canvas`).waitFor();
  return page.evaluate((plotId) => {
    const box = document.getElementById(plotId) as HTMLElement & {
      plot: { series: Array<{ label: string }>; data: number[][] };
    };
    return { labels: box.plot.series.map((s) => s.label), data: box.plot.data.map((d) => Array.from(d)) };
  }, id);
}

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('rateplots', {
    folder: 'dashboard-dist-rate-plots',
    height: 900,
    seed: async ({ db }) => {
      uart0Id = await upsertLink(db, { rig: 'rig1', name: 'uart0', protocol: 'qs' });
      await upsertLink(db, { rig: 'rig1', name: 'uart1', protocol: 'qs' });
      await upsertLink(db, { rig: 'rig2', name: 'stm0', protocol: 'stp' });
      // uart0: 50 minutes at 20 records/s, one minute block after another, then a burst of
      // 200 records/s with errors and gaps; uart1: 5 records/s; stm0: 40 records/s for 20 minutes.
      for (let m = 55n; m > 5n; m--) {
        const lo = NOW - m * MINUTE;
        const burst = m <= 20n && m > 15n;
        blocks.push({
          rig: 'rig1',
          link: 'uart0',
          lo,
          hi: lo + MINUTE - 1n,
          records: burst ? 12_000 : 1200,
          errors: burst ? 30 : m % 10n === 0n ? 2 : 0,
          gaps: burst ? 6 : 0,
        });
        blocks.push({ rig: 'rig1', link: 'uart1', lo, hi: lo + MINUTE - 1n, records: 300, errors: 0, gaps: 0 });
        if (m <= 30n && m > 10n)
          blocks.push({ rig: 'rig2', link: 'stm0', lo, hi: lo + MINUTE - 1n, records: 2400, errors: 0, gaps: 0 });
      }
      // A lab that started five minutes ago: 10 records/s.
      freshId = await upsertLink(db, { rig: 'rig3', name: 'fresh', protocol: 'qs' });
      for (let m = 5n; m > 0n; m--) {
        const lo = NOW - m * MINUTE;
        blocks.push({ rig: 'rig3', link: 'fresh', lo, hi: lo + MINUTE - 1n, records: 600, errors: 0, gaps: 0 });
      }
      await storeBlockSummaries(db, blocks);
    },
  });
  ({ base, page } = dashboard);
  // The token arrives once in the URL and stays in localStorage.
  await dashboard.signIn(READ_TOKEN, '/fleet');
});

afterAll(() => dashboard?.close());

describe('plots of records/s, errors and gaps', () => {
  it('plots every link’s records/s over the last hour on the fleet page', async () => {
    const plot = await drawnPlot('fleet-rates');
    expect(new URL(page.url()).hash).toBe('#/fleet?range=1h');
    expect(plot.labels).toEqual(['time (UTC)', 'rig1 / uart0', 'rig1 / uart1', 'rig2 / stm0', 'rig3 / fresh']);
    const [times, uart0, uart1, stm0] = plot.data;
    const bucketS = times[1] - times[0];
    // The range ends at the page's now, a minute or more past the newest block; it starts an hour before.
    expect(times.at(-1)! + bucketS).toBeGreaterThan(Number(NOW / S) - 5 * 60);
    expect(times[0]).toBeLessThan(Number(NOW / S) - 55 * 60);
    // Every record of the blocks is drawn (rate × bucket seconds), at the rate each link ran.
    const total = (rates: number[]) => rates.reduce((n, r) => n + r * bucketS, 0);
    const stored = (link: string) => blocks.filter((b) => b.link === link).reduce((n, b) => n + b.records, 0);
    expect(total(uart0)).toBeCloseTo(stored('uart0'), -1);
    expect(total(uart1)).toBeCloseTo(stored('uart1'), -1);
    expect(total(stm0)).toBeCloseTo(stored('stm0'), -1);
    expect(Math.max(...uart0)).toBeCloseTo(200, 1);
    expect(Math.max(...uart1)).toBeCloseTo(5, 1);
    expect(Math.max(...stm0)).toBeCloseTo(40, 1);
    await page.locator('#fleet-rates').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotsDir, 'fleet-rates.png') });
  });

  it('keeps the range in the URL: another range redraws the plot from the api', async () => {
    await page.selectOption('#time-range', '15m');
    await page.waitForFunction(() => location.hash === '#/fleet?range=15m');
    await page.waitForFunction(() => {
      const box = document.getElementById('fleet-rates') as HTMLElement & { plot?: { data: number[][] } };
      const t = box.plot?.data[0];
      return t !== undefined && t[t.length - 1] - t[0] < 20 * 60;
    });
    // Reloaded as it is, the page shows the same range.
    await page.reload();
    await drawnPlot('fleet-rates');
    expect(await page.locator('#time-range').inputValue()).toBe('15m');
  });

  it('plots a link’s records/s, errors and gaps over the range in its URL', async () => {
    const fromNs = NOW - 40n * MINUTE;
    const toNs = NOW;
    const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();
    await page.goto(`${base}/#/link/${uart0Id}?from=${iso(fromNs)}&to=${iso(toNs)}`);
    const rate = await drawnPlot('link-rate');
    const faults = await drawnPlot('link-faults');
    expect(rate.labels).toEqual(['time (UTC)', 'records/s']);
    expect(faults.labels).toEqual(['time (UTC)', 'errors', 'gaps']);
    const times = rate.data[0];
    // Equal slices of the range, as the api cuts it.
    const buckets = BigInt(times.length);
    const widthNs = (toNs - fromNs + buckets - 1n) / buckets;
    expect(times[0]).toBe(Number(fromNs / S));
    const expected = expectedRates(blocks, 'rig1', 'uart0', { fromNs, toNs, widthNs, buckets: times.length });
    expect(rate.data[1]).toEqual(expected.recordsPerSecond);
    expect(faults.data[1]).toEqual(expected.errors);
    expect(faults.data[2]).toEqual(expected.gaps);
    // The burst is there: 30 errors and 6 gaps a minute for five minutes, and 2 errors every ten minutes.
    expect(faults.data[1].reduce((a, b) => a + b, 0)).toBeCloseTo(5 * 30 + 3 * 2, 1);
    expect(faults.data[2].reduce((a, b) => a + b, 0)).toBeCloseTo(5 * 6, 1);
    expect(await page.locator('#time-range').inputValue()).toBe('custom');
    await page.locator('#link-faults').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotsDir, 'link-rates.png') });
  });

  it('fits the default range to records that began well into the last hour', async () => {
    await page.goto(`${base}/#/link/${freshId}`);
    await page.waitForFunction(() => location.hash.endsWith('range=1h'));
    const rate = await drawnPlot('link-rate');
    const times = rate.data[0];
    // The plot starts a bucket before the lab's first records, not an hour ago.
    const firstS = Number((NOW - 5n * MINUTE) / S);
    expect(times[0]).toBeLessThanOrEqual(firstS);
    expect(times[0]).toBeGreaterThan(firstS - 60);
    const bucketS = times[1] - times[0];
    expect(rate.data[1].reduce((n, r) => n + r * bucketS, 0)).toBeCloseTo(5 * 600, -1);
    await page.screenshot({ path: join(screenshotsDir, 'link-rates-fresh.png') });
  });

  it('says so when a range holds no records', async () => {
    await page.goto(`${base}/#/link/${uart0Id}?from=2020-01-01T00:00:00.000Z&to=2020-01-02T00:00:00.000Z`);
    await page.locator('.plot-status', { hasText: 'No records stored in this range.' }).waitFor();
    expect(await page.locator('#link-rate').isHidden()).toBe(true);
  });
});
