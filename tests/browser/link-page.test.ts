// An STP link's page in Chromium, against the real api, NATS, Postgres and a gateway in
// process whose tcp-listen link has a target connected (and a second one refused): the
// connection panel, the settings form taking values as `tracehub link set` does, and the
// settings in use for the latest session with what the link address laid over them.
import net from 'node:net';
import { join } from 'node:path';
import { StpLinkSettingsSchema } from '@tracehub/contracts';
import { getLinkByName, setLinkSettings, setSessionLinkSettings, upsertLink, upsertSession } from '@tracehub/db';
import { Gateway, TcpListenSource } from '@tracehub/link';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN } from '../api/fixture-data.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';
import { connectTarget } from '../support/tcp-target.js';

let gateway: Gateway;
let dashboard: DashboardOnBackends;
let page: Page;
let stpLinkId: number;
let unservedLinkId: number;
let target: net.Socket;

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('linkpage', {
    folder: 'dashboard-dist-link-page',
    height: 1000,
    settings: { controlTimeoutMs: 2000 },
    topology: true,
    seed: async ({ db, bus }) => {
      // The link's latest session: stored settings from before it, and the gateway's address
      // (`?maxPauseMs=20&start=hot_plug`) over them.
      stpLinkId = await upsertLink(db, { rig: 'rigB', name: 'stm0', protocol: 'stp' });
      await setLinkSettings(db, {
        linkId: stpLinkId,
        settings: { output: 'ost', maxPauseMs: 50 },
        changedBy: 'lab@bench',
        via: 'cli',
        applies: 'next-session',
      });
      await new Promise((r) => setTimeout(r, 50));
      await upsertSession(db, { id: 's-stm0-1', rig: 'rigB', link: 'stm0', protocol: 'stp', startedAt: new Date() });
      await setSessionLinkSettings(db, 's-stm0-1', { maxPauseMs: 20, start: 'hot_plug' });
      unservedLinkId = await upsertLink(db, { rig: 'rigB', name: 'uart9', protocol: 'qs' });

      const source = new TcpListenSource('127.0.0.1', 0, { secondTarget: 'refuse' });
      gateway = new Gateway({ bus, link: { protocol: 'stp', rig: 'rigB', link: 'stm0' }, source, flushMs: 5 });
      await gateway.start();
      target = await connectTarget(source.boundPort);
      target.write(Buffer.from([0xf0, 0x00]));
      // A second target while the first streams: refused, and counted.
      const second = net.connect(source.boundPort, '127.0.0.1');
      second.on('error', () => {});
      await new Promise((r) => second.once('close', r));
    },
  });
  ({ page } = dashboard);
});

afterAll(async () => {
  target?.destroy();
  await gateway?.stop(1000);
  await dashboard?.close();
});

describe("an STP link's page in Chromium", () => {
  it('shows the connected target, since when, the tcp-listen policy and the refused connection', async () => {
    await dashboard.signIn(CONTROL_TOKEN, `/link/${stpLinkId}`);
    const address = `127.0.0.1:${target.localPort}`;
    await page.locator('#link-connection tr[data-key=target] td', { hasText: address }).waitFor();
    const row = (key: string) => page.locator(`#link-connection tr[data-key="${key}"] td`).textContent();
    expect(await row('target')).toBe(`connected: ${address}`);
    expect(await row('since')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+s ago\)$/);
    expect(await row('source')).toMatch(/^tcp-listen/);
    expect(await row('second target')).toMatch(/is refused/);
    expect(await row('not taken')).toMatch(/^1 refused · 0 replaced · 0 closed for silence/);
    expect(await row('session')).toBe(gateway.publisher.currentSession);
    await page.screenshot({ path: join(screenshotsDir, 'link-connection.png'), fullPage: true });
  });

  it('takes littleEndianMasters 17,18 and version 1 in the settings form, and lists the STP settings', async () => {
    await dashboard.signIn(CONTROL_TOKEN, `/link/${stpLinkId}`);
    await page.locator('#settings-names tr[data-key=littleEndianMasters]').waitFor();
    // Every setting an STP link takes (the contract's schema), one row each.
    expect(await page.locator('#settings-names tbody tr').count()).toBe(
      Object.keys(StpLinkSettingsSchema.properties).length,
    );
    // The settings of the latest session: the link address over the stored ones.
    const inUse = (key: string) => page.locator(`#settings-in-use tr[data-key="${key}"]`);
    expect(await inUse('maxPauseMs').getAttribute('data-from')).toBe('address');
    expect(await inUse('maxPauseMs').textContent()).toBe('maxPauseMs20link address overrides stored 50');
    expect(await inUse('output').getAttribute('data-from')).toBe('stored');

    await page.fill('#settings-form [name=name]', 'littleEndianMasters');
    await page.locator('#settings-hint', { hasText: 'list of 0..65535' }).waitFor();
    await page.fill('#settings-form [name=value]', '17,18');
    await page.click('#settings-form button');
    await page.locator('#settings-table tr[data-key=littleEndianMasters] td', { hasText: '17, 18' }).waitFor();
    await page.fill('#settings-form [name=name]', 'version');
    await page.fill('#settings-form [name=value]', '1');
    await page.click('#settings-form button');
    await page.locator('#settings-table tr[data-key=version] td', { hasText: '1' }).waitFor();
    expect(await page.locator('#settings-problem').isHidden()).toBe(true);
    expect((await getLinkByName(dashboard.backends.db, 'rigB', 'stm0'))?.settings).toEqual({
      output: 'ost',
      maxPauseMs: 50,
      littleEndianMasters: [17, 18],
      version: 1,
    });
    await page.locator('#settings-in-use-box', { hasText: 'stored settings changed since' }).waitFor();
    await page.fill('#settings-form [name=name]', '');
    await page.fill('#settings-form [name=value]', '');
    await page.screenshot({ path: join(screenshotsDir, 'link-settings-stp.png'), fullPage: true });
  });

  it('says no gateway serves a link nothing answers for', async () => {
    await dashboard.signIn(CONTROL_TOKEN, `/link/${unservedLinkId}`);
    const notice = page.locator('#connection-notice', { hasText: 'No gateway serves this link' });
    await notice.waitFor();
    expect(await notice.isVisible()).toBe(true);
    // Nothing of a connection is shown for it.
    expect(await page.locator('#link-connection tr[data-key=target]').count()).toBe(0);
  });
});
