// The rules, alerts and comparison pages in Chromium, with screenshots: a rule being edited in
// the form, and then added through it, previews what it fired over the last hour of stored
// records (the same both times), a live record fires
// it (the alerts page and the fleet's firing badge show it), and two runs of dpp_qv that
// differ in one transition show that transition as their first divergence.
import { join } from 'node:path';
import type { TraceRecord } from '@tracehub/contracts';
import { transitionRecord } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN } from '../api/fixture-data.js';
import { publishLive } from '../support/publish-live.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { storeSecondRun } from '../support/second-run.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';

let dashboard: DashboardOnBackends;
let page: Page;
let changed: TraceRecord;

/** The first run was recorded twenty minutes ago: inside the rules page's last-hour preview. */
const startNs = BigInt(Date.now() - 20 * 60_000) * 1_000_000n;

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('watchweb', {
    folder: 'dashboard-dist-watch',
    height: 900,
    topology: true,
    settings: { watch: { leaseMs: 10_000, tickMs: 100, dashboardUrl: '' } },
    seed: async ({ db }) => {
      const first = await storeQsFixture(db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 'run-a', startNs });
      changed = await storeSecondRun(db, first.records, { rig: 'rig2', session: 'run-b', laterNs: 60_000_000_000n });
    },
  });
  ({ page } = dashboard);
  await dashboard.signIn(CONTROL_TOKEN, '/rules');
});

afterAll(() => dashboard?.close());

describe('the watch pages in Chromium', () => {
  it('preview a rule being edited and add it with a preview of the last hour, show its live alert, and badge the link on the fleet page', async () => {
    await page.locator('#add-rule').waitFor();
    await page.fill('#add-rule input[name=name]', 'Philo timeouts');
    await page.fill(
      '#add-rule input[name=condition]',
      '{"kind":"records","filter":{"names":["QS_QEP_TRAN"],"qsSig":"TIMEOUT_SIG"}}',
    );
    await page.fill('#add-rule input[name=rigs]', 'rig1');
    // The rule being edited, previewed before it is added.
    await page.click('#preview-unsaved');
    await page.locator('#rule-preview h3', { hasText: 'Philo timeouts (not saved): the last hour' }).waitFor();
    const unsaved = page.locator('#preview-alerts tbody tr');
    await unsaved.first().waitFor();
    expect(await unsaved.first().locator('td').first().textContent()).toBe('rig1 / uart0');
    const unsavedCount = await unsaved.count();
    expect(await page.locator('#rules tr[data-rule]').count()).toBe(0);
    await page.screenshot({ path: join(screenshotsDir, 'watch-rules-unsaved-preview.png'), fullPage: true });
    await page.click('#add-rule button[type=submit]');
    await page.locator('#rules tr[data-rule]').waitFor();
    await page.locator('#rule-preview h3', { hasText: /^Philo timeouts: the last hour$/ }).waitFor();
    // Nothing fires yet: no count beside Alerts.
    expect(await page.locator('#firing-count').isVisible()).toBe(false);
    const preview = page.locator('#preview-alerts tbody tr');
    await preview.first().waitFor();
    expect(await preview.count()).toBeGreaterThan(0);
    // The saved rule finds what it found unsaved.
    expect(await preview.count()).toBe(unsavedCount);
    expect(await preview.first().locator('td').first().textContent()).toBe('rig1 / uart0');
    await page.screenshot({ path: join(screenshotsDir, 'watch-rules.png'), fullPage: true });

    // A live record of rig1's link fires the rule.
    const now = BigInt(Date.now()) * 1_000_000n;
    publishLive(
      dashboard.backends.bus,
      [transitionRecord({ rig: 'rig1', link: 'uart0', session: 'run-live' }, 0, { hostNs: now.toString() })],
      0,
    );
    await page.goto(`${dashboard.base}/#/alerts`);
    const firing = page.locator('#alerts tr.firing');
    await firing.waitFor();
    expect(await firing.locator('td').nth(2).textContent()).toBe('rig1 / uart0');
    expect(await firing.locator('a', { hasText: 'record #0' }).getAttribute('href')).toBe(
      '#/session/run-live?seq=0&after=-1',
    );
    await page.locator('#firing-count', { hasText: '1' }).waitFor();
    await page.screenshot({ path: join(screenshotsDir, 'watch-alerts.png'), fullPage: true });

    await page.goto(`${dashboard.base}/#/fleet`);
    await page.locator('tr[data-link="rig1/uart0"] .firing-badge', { hasText: '1 firing' }).waitFor();
    expect(await page.locator('tr[data-link="rig2/uart0"] .firing-badge').count()).toBe(0);
    await page.screenshot({ path: join(screenshotsDir, 'watch-fleet-badges.png') });
  });

  it('compare two runs: counts side by side and the changed transition as the first divergence', async () => {
    await page.goto(`${dashboard.base}/#/compare?a=run-a&b=run-b`);
    const divergence = page.locator('#divergence');
    await divergence.locator('h3').waitFor();
    const sides = divergence.locator('.side code');
    expect(await sides.nth(0).textContent()).toContain(`#${changed.seq} QS_QEP_TRAN ${changed.qs?.obj}`);
    // The two sides' lines: the same transition entering two states.
    const lines = await divergence.locator('.side small').allTextContents();
    expect(lines[0]).toContain(`->${changed.fields.target}`);
    expect(lines[1]).not.toBe(lines[0]);
    expect(await divergence.locator('.side a').first().getAttribute('href')).toBe(
      `#/session/run-a?seq=${changed.seq}&after=${changed.seq - 1}`,
    );
    expect(await page.locator('#compare-counts tbody tr').count()).toBeGreaterThan(5);
    await page.screenshot({ path: join(screenshotsDir, 'watch-compare.png'), fullPage: true });
  });
});
