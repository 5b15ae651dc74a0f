// A link's settings on its page in Chromium, against the real api and Postgres: the document,
// a change made there and kept with who made it, and a qspy .dic file given to the link and
// saved from its latest session.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from '@tracehub/api';
import { getLinkByName, setLinkSettings, upsertLink } from '@tracehub/db';
import { fixturesDir } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN } from '../api/fixture-data.js';
import { type ControlBackends, controlBackends } from '../support/scripted-qs-link.js';
import { type ServedDashboard, screenshotsDir, serveDashboard } from '../support/served-dashboard.js';

const DIC = join(fixturesDir, 'qspy-udp', 'qspy_cwd', 'qspy261123_180225.dic');

let backends: ControlBackends;
let app: App;
let dashboard: ServedDashboard;
let page: Page;

beforeAll(async () => {
  backends = await controlBackends('linksettings', 'rig5', 'uart0');
  const { db, bus } = backends;
  dashboard = await serveDashboard('dashboard-dist-settings', { db, bus }, { height: 1000 });
  ({ app, page } = dashboard);
});

afterAll(async () => {
  await dashboard?.close();
  await backends?.close();
});

describe("a link's settings in Chromium", () => {
  it('changes a setting, keeps who changed it, and takes and saves qspy .dic files', async () => {
    await dashboard.signIn(CONTROL_TOKEN, `/link/${backends.stored.linkId}`);
    await page.locator('#settings-table td', { hasText: 'No settings' }).waitFor();
    expect(await page.locator('#settings-history td').first().textContent()).toBe('Never changed.');

    // One setting, from the next session.
    await page.fill('#settings-form [name=name]', 'objPtrSize');
    await page.fill('#settings-form [name=value]', '8');
    await page.click('#settings-form button');
    await page.locator('#settings-done', { hasText: 'applies from the next session' }).waitFor();
    await page.locator('#settings-table tr[data-key=objPtrSize] td', { hasText: '8' }).waitFor();
    expect((await getLinkByName(backends.db, 'rig5', 'uart0'))?.settings).toEqual({ objPtrSize: 8 });
    const change = page.locator('#settings-history tbody tr').first();
    expect(await change.locator('td').nth(2).textContent()).toBe('dashboard');
    expect(await change.locator('td').nth(4).textContent()).toBe('objPtrSize = 8');

    // A value the link cannot take: the API's sentence, nothing stored.
    await page.fill('#settings-form [name=value]', '3');
    await page.click('#settings-form button');
    await page.locator('#settings-problem:not([hidden])').waitFor();
    expect(await page.locator('#settings-problem').textContent()).toMatch(/objPtrSize/);
    expect((await getLinkByName(backends.db, 'rig5', 'uart0'))?.settings).toEqual({ objPtrSize: 8 });

    // qspy's own .dic file, given to the link.
    await page.setInputFiles('#dic-file', DIC);
    await page.locator('#settings-table tr[data-key=dictionaries] td', { hasText: 'qspy .dic file' }).waitFor();
    expect(await page.locator('#settings-table tr[data-key=dictionaries] td').textContent()).toBe(
      'qspy .dic file: 25 names, build 261123_180225',
    );
    expect((await getLinkByName(backends.db, 'rig5', 'uart0'))?.settings.dictionaries).toBe(
      readFileSync(DIC, 'latin1'),
    );
    await page.screenshot({ path: join(screenshotsDir, 'link-settings.png'), fullPage: true });

    // The latest session's names, saved as a .dic file.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dic-save')]);
    const saved = readFileSync((await download.path()) as string, 'latin1');
    const fromApi = await app.inject({
      url: `/api/v1/sessions/${backends.stored.session}/dictionaries.dic`,
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(saved).toBe(fromApi.rawPayload.toString('latin1'));
    expect(saved).toMatch(/^-v\d{3}\n/);
  });

  it('shows the settings to a read-only token and says why it cannot change them', async () => {
    // A link of its own, with a setting stored: whatever the other test did.
    const linkId = await upsertLink(backends.db, { rig: 'rig5', name: 'uart7', protocol: 'qs' });
    await setLinkSettings(backends.db, {
      linkId,
      settings: { objPtrSize: 8 },
      changedBy: 'lab@bench',
      via: 'cli',
      applies: 'next-session',
    });
    await dashboard.signIn(READ_TOKEN, `/link/${linkId}`);
    await page.locator('#settings-table tr[data-key=objPtrSize] td', { hasText: '8' }).waitFor();
    await page.fill('#settings-form [name=name]', 'sigSize');
    await page.fill('#settings-form [name=value]', '1');
    await page.click('#settings-form button');
    await page.locator('#settings-problem', { hasText: 'control scope' }).waitFor();
    expect(await page.locator('#settings-problem').textContent()).toMatch(/control scope/);
    // Nothing changed.
    expect((await getLinkByName(backends.db, 'rig5', 'uart7'))?.settings).toEqual({ objPtrSize: 8 });
    await page.screenshot({ path: join(screenshotsDir, 'link-settings-read-only.png'), fullPage: true });
  });
});
