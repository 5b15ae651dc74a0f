/// <reference lib="dom" />
// Issue 36: the PalmTrace Reporter endpoints page: list, add, remove, state and counters, with a
// Reporter stand-in (a TCP server that reads what the bridge sends).
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { T0 } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN } from '../api/fixture-data.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';

let dashboard: DashboardOnBackends;
let page: Page;
let reporter: net.Server;
let port = 0;
/** Bytes the stand-in received. */
let received = 0;

beforeAll(async () => {
  reporter = net.createServer((socket) => socket.on('data', (d) => (received += d.length)));
  await new Promise<void>((resolve) => reporter.listen(0, '127.0.0.1', resolve));
  port = (reporter.address() as AddressInfo).port;
  dashboard = await dashboardOnFreshBackends('reporterspage', {
    folder: 'dashboard-dist-reporters',
    height: 700,
    seed: async ({ db }) => {
      await storeQsFixture(db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's-dpp', startNs: T0 });
    },
  });
  page = dashboard.page;
});

afterAll(async () => {
  await dashboard?.close();
  await new Promise((resolve) => reporter?.close(resolve));
});

describe('the Reporters page in Chromium', () => {
  it('adds a Reporter that replays a session, shows its state and counters, and removes it', async () => {
    await dashboard.signIn(CONTROL_TOKEN, '/fleet');
    await page.locator('header a', { hasText: 'Reporters' }).click();
    await page.locator('#reporters-status', { hasText: 'No Reporter endpoints.' }).waitFor();
    await page.locator('#reporter-id').fill('lab2');
    await page.locator('#reporter-host').fill('127.0.0.1');
    await page.locator('#reporter-port').fill(String(port));
    await page.locator('#reporter-session').fill('s-dpp');
    await page.locator('button', { hasText: 'Add Reporter' }).click();
    const row = page.locator('#reporters tr[data-reporter="lab2"]');
    // The replay of the session's records is sent, and the stand-in reads it.
    await row.waitFor();
    await expect
      .poll(async () => row.locator('td').nth(2).textContent(), { timeout: 20_000 })
      .toMatch(/^replay \(done, \d+ records\)$/);
    expect(await row.locator('td').nth(1).textContent()).toBe(`127.0.0.1:${port}`);
    expect(await row.locator('td').nth(3).textContent()).toBe('yes');
    await expect.poll(async () => Number(await row.locator('td').nth(4).textContent())).toBeGreaterThan(0);
    await expect.poll(() => received).toBeGreaterThan(0);
    await page.screenshot({ path: join(screenshotsDir, 'reporters-page.png') });

    // The same name again: the api's refusal, in one sentence.
    await page.locator('#reporter-id').fill('lab2');
    await page.locator('button', { hasText: 'Add Reporter' }).click();
    await page.locator('#reporter-problem:not([hidden])').waitFor();
    expect(await page.locator('#reporter-problem').textContent()).toMatch(/lab2/);

    await row.locator('button', { hasText: 'remove' }).click();
    await row.waitFor({ state: 'detached' });
    await page.locator('#reporters-status', { hasText: 'No Reporter endpoints.' }).waitFor();
  });

  it('refuses to add with a read-only token, saying why', async () => {
    await dashboard.signIn(READ_TOKEN, '/reporters');
    await page.locator('#reporter-host').fill('127.0.0.1');
    await page.locator('#reporter-port').fill(String(port));
    await page.locator('button', { hasText: 'Add Reporter' }).click();
    await page.locator('#reporter-problem:not([hidden])').waitFor();
    expect(await page.locator('#reporters tr[data-reporter]').count()).toBe(0);
  });
});
