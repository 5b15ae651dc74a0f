/// <reference lib="dom" />
// The dashboard's first screen for someone who has no token yet, and for an api that runs
// without authentication (API_AUTH=none): each says in plain words what is going on.
import { upsertLink } from '@tracehub/db';
import { describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { type DashboardOnBackends, dashboardOnFreshBackends } from '../support/served-dashboard.js';

/** The welcome without a token: where to paste one; the fleet once it is there. */
async function expectTokenWelcome({ page, base }: DashboardOnBackends): Promise<void> {
  await page.goto(`${base}/#/fleet`);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  const welcome = page.locator('section.welcome');
  await welcome.waitFor();
  expect(await welcome.textContent()).toMatch(/Paste your token into the "API token" box at the top right/);
  expect(await welcome.textContent()).toMatch(/API_TOKENS/);
  expect(await page.locator('.auth-banner').isVisible()).toBe(false);
  await page.fill('#token', READ_TOKEN);
  await page.press('#token', 'Enter');
  await page.getByText('uart0').first().waitFor();
  expect(await welcome.count()).toBe(0);
}

describe('the first screen', () => {
  it('without a token explains where to paste one, and shows the fleet once it is there', async () => {
    const secured = await dashboardOnFreshBackends('firstscreen', {
      folder: 'dashboard-dist-first-screen',
      height: 700,
      seed: async ({ db }) => {
        await upsertLink(db, { rig: 'rig1', name: 'uart0', protocol: 'qs' });
      },
    });
    try {
      await expectTokenWelcome(secured);
    } finally {
      await secured.close();
    }
  });

  it('with API_AUTH=none shows the fleet without a token, under a banner saying anyone may read and control', async () => {
    const open = await dashboardOnFreshBackends('firstscreennone', {
      folder: 'dashboard-dist-first-screen-none',
      height: 700,
      settings: { authNone: true, tokens: new Map() },
      seed: async ({ db }) => {
        await upsertLink(db, { rig: 'rig2', name: 'stm0', protocol: 'stp' });
      },
    });
    try {
      await open.page.goto(`${open.base}/#/fleet`);
      await open.page.evaluate(() => localStorage.clear());
      await open.page.reload();
      await open.page.getByText('stm0').first().waitFor();
      const banner = open.page.locator('.auth-banner');
      expect(await banner.isVisible()).toBe(true);
      expect(await banner.textContent()).toMatch(
        /API_AUTH=none.*anyone who can reach it may read every trace and control/,
      );
      expect(await open.page.locator('section.welcome').count()).toBe(0);
    } finally {
      await open.close();
    }
  });
});
