import { join } from 'node:path';
import type { TraceRecord } from '@tracehub/contracts';
import type { SessionChannels } from '@tracehub/db';
import { T0 } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';
import { expectedChannels, storeStpFixture } from '../support/stp-fixture-session.js';

let dashboard: DashboardOnBackends;
let page: Page;
let base: string;
let issue27: TraceRecord[];
let gerr: TraceRecord[];

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('channelsweb', {
    folder: 'dashboard-dist-channels',
    height: 900,
    seed: async ({ db }) => {
      issue27 = await storeStpFixture(db, 'coresight_issue27', {
        rig: 'rig1',
        link: 'stm0',
        session: 's-27',
        startNs: T0,
      });
      gerr = await storeStpFixture(db, 'v2_gerr', { rig: 'rig1', link: 'stm1', session: 's-gerr', startNs: T0 });
      await storeQsFixture(db, 'defer', { rig: 'rig1', link: 'uart0', session: 's-qs', startNs: T0 });
    },
  });
  ({ base, page } = dashboard);
  // The token arrives once in the URL and stays in localStorage.
  await dashboard.signIn(READ_TOKEN, '/fleet');
});

afterAll(() => dashboard?.close());

/** Checks every master, channel and error the page shows against what was expected. */
async function expectTree(expected: SessionChannels) {
  const tree = page.locator('#channel-tree');
  await tree.waitFor();
  expect(await tree.locator('tr.master').count()).toBe(expected.masters.length);
  expect(await tree.locator('tr.channel').count()).toBe(expected.masters.reduce((n, m) => n + m.channels.length, 0));
  for (const m of expected.masters) {
    const row = tree.locator(`tr[data-master="${m.master}"]`);
    expect(await row.locator('td[data-col=records]').textContent()).toBe(m.records.toLocaleString('en'));
    expect(await row.locator('td[data-col=errors]').textContent()).toBe(String(m.errors));
    for (const c of m.channels) {
      const ch = tree.locator(`tr[data-channel="${m.master}/${c.channel}"]`);
      expect(await ch.locator('td[data-col=records]').textContent()).toBe(c.records.toLocaleString('en'));
      expect(await ch.locator('td[data-col=errors]').textContent()).toBe(String(c.errors));
      expect(await ch.locator('td[data-col=names]').getAttribute('title')).toBe(c.names.join('\n'));
    }
  }
  const errors = page.locator('#stream-errors');
  expect(await errors.locator('tr').count()).toBe(expected.errors.length);
  for (const e of expected.errors)
    expect(await errors.locator(`tr[data-error="${e.name}"] td`).textContent()).toBe(e.count.toLocaleString('en'));
}

describe("an STP session's masters and channels in Chromium", () => {
  it('shows the tree with per-channel counts and the stream errors above it', async () => {
    const expected = expectedChannels(issue27);
    // The capture has errors on a channel and of the stream itself, and more than one channel.
    expect(expected.errors.length).toBeGreaterThan(1);
    expect(expected.masters[0].channels.length).toBeGreaterThan(1);
    await page.goto(`${base}/#/session/s-27`);
    await page.locator('nav.tabs a.active', { hasText: 'Masters and channels' }).waitFor();
    await expectTree(expected);
    expect(await page.locator('#channels-status').textContent()).toContain(`${expected.unaddressed} on no channel`);
    await page.screenshot({ path: join(screenshotsDir, 'stp-channels.png'), fullPage: true });
  });

  it('folds and unfolds each master, keeping it in the URL', async () => {
    const expected = expectedChannels(gerr);
    expect(expected.masters.length).toBe(3);
    await page.goto(`${base}/#/session/s-gerr?view=channels`);
    await expectTree(expected);
    const [first, second] = expected.masters;
    const channelsOf = (master: number) => page.locator(`#channel-tree tr.channel[data-channel^="${master}/"]`);
    await page.locator(`tr[data-master="${first.master}"] button.toggle`).click();
    expect(await channelsOf(first.master).first().isHidden()).toBe(true);
    expect(await channelsOf(second.master).first().isVisible()).toBe(true);
    expect(page.url()).toContain(`collapsed=${first.master}`);
    await page.screenshot({ path: join(screenshotsDir, 'stp-channels-folded.png') });
    // A reload keeps the master folded; unfolding shows its channels again.
    await page.reload();
    await page.locator('#channel-tree').waitFor();
    expect(await channelsOf(first.master).first().isHidden()).toBe(true);
    await page.locator(`tr[data-master="${first.master}"] button.toggle`).click();
    expect(await channelsOf(first.master).first().isVisible()).toBe(true);
    expect(page.url()).not.toContain('collapsed=');
  });

  it("opens a channel's records on the STP page", async () => {
    const { master, channels } = expectedChannels(issue27).masters[0];
    const busiest = channels.reduce((a, b) => (b.records > a.records ? b : a));
    await page.goto(`${base}/#/session/s-27?view=channels`);
    await page.locator(`tr[data-channel="${master}/${busiest.channel}"] td.label a`).click();
    await page.locator('#search-status', { hasText: `${busiest.records} records` }).waitFor();
    expect(page.url()).toContain(`#/stp?session=s-27&master=${master}&channel=${busiest.channel}`);
  });

  it('has no masters-and-channels tab for a QS session', async () => {
    await page.goto(`${base}/#/session/s-qs`);
    await page.locator('nav.tabs a.active', { hasText: 'Sequence diagram' }).waitFor();
    expect(await page.locator('nav.tabs a', { hasText: 'Masters and channels' }).count()).toBe(0);
  });
});
