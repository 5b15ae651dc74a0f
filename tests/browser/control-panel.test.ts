// The control panel of a link's page in Chromium, against the real api, NATS, Postgres and a
// gateway whose TCP link ends at a scripted QS target (its answers are decoded from the
// records it sends), with a front-end attached to the link's UDP port.
import { createSocket, type Socket } from 'node:dgram';
import { join } from 'node:path';
import { upsertLink } from '@tracehub/db';
import type { ScriptedTarget } from '@tracehub/qspy-frontend';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN } from '../api/fixture-data.js';
import { type StoredFixture, storeQsFixture } from '../support/qs-fixture-session.js';
import { type ControlBackends, controlBackends } from '../support/scripted-qs-link.js';
import { type ServedDashboard, screenshotsDir, serveDashboard } from '../support/served-dashboard.js';

let backends: ControlBackends;
let scripted: ScriptedTarget;
let served: StoredFixture;
let unserved: StoredFixture;
let stpLinkId: number;
let fe: Socket;
const fromPort: Buffer[] = [];
let dashboard: ServedDashboard;
let page: Page;

beforeAll(async () => {
  backends = await controlBackends('panel', 'rig4', 'uart1');
  const { db, bus, link } = backends;
  served = backends.stored;
  scripted = link.scripted;
  // A QS link no gateway serves, and an STP link.
  unserved = await storeQsFixture(db, 'defer', {
    rig: 'rig9',
    link: 'uart0',
    session: 's-unserved',
    startNs: 1_764_000_100_000_000_000n,
  });
  stpLinkId = await upsertLink(db, { rig: 'rig8', name: 'stp0', protocol: 'stp' });

  dashboard = await serveDashboard(
    'dashboard-dist-control',
    { db, bus },
    { height: 1000, settings: { controlTimeoutMs: 2000 } },
  );
  ({ page } = dashboard);

  // A QUTest-style front-end holds the link's UDP port (text channel only).
  fe = createSocket('udp4');
  fe.on('message', (m) => fromPort.push(m));
  await new Promise<void>((r) => fe.bind(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => fe.send(Uint8Array.of(0, 0x80, 2), link.frontEndPort, '127.0.0.1', () => r()));
  for (let i = 0; i < 200 && fromPort.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
});

afterAll(async () => {
  await dashboard?.close();
  fe?.close();
  await backends?.close();
});

const openLink = (id: number, token: string) => dashboard.signIn(token, `/link/${id}`);

describe('control panel in Chromium', () => {
  it('sends commands and shows each with the target answer to it, a Trg-ERR as an error', async () => {
    await openLink(served.linkId, CONTROL_TOKEN);
    await page.locator('#control-state td', { hasText: 'connected' }).first().waitFor();
    await page.locator('#control-commands:not([disabled])').waitFor();
    expect(await page.locator('h2').textContent()).toBe('rig4 / uart1');
    // Names come from the link's dictionaries.
    expect(await page.locator('#names-objects option').evaluateAll((os) => os.map((o) => o.textContent))).toEqual([
      'l_philo',
      'l_table',
    ]);
    expect(await page.locator('#names-signals option').allTextContents()).toEqual(['EAT_SIG']);

    // The AO filter by name: the target acknowledges it.
    const aoFilter = page.locator('form[data-command=aoFilter]');
    await aoFilter.locator('input[name=object]').fill('l_philo');
    await aoFilter.locator('button').click();
    await page.locator('#command-history tbody tr').first().waitFor();

    // A peek with no current AP object: the target answers Trg-ERR.
    const peek = page.locator('form[data-command=peek]');
    await peek.locator('select[name=size]').selectOption('4');
    await peek.locator('input[name=num]').fill('2');
    await peek.locator('button').click();
    await page.locator('#command-history tbody tr').nth(1).waitFor();

    const rows = page.locator('#command-history tbody tr');
    expect(await rows.count()).toBe(2);
    const newest = rows.nth(0);
    expect(await newest.getAttribute('data-outcome')).toBe('error');
    expect(await newest.locator('.badge').textContent()).toBe('Trg-ERR');
    expect(await newest.locator('.badge').getAttribute('class')).toBe('badge bad');
    expect(await newest.locator('.summary').textContent()).toBe('peek offset=0 size=4 num=2');
    expect(await newest.locator('td.answer .mono').textContent()).toMatch(/Trg-ERR\s+QS_RX_PEEK/);
    expect(await newest.locator('.answer-error').textContent()).toMatch(/^the target refused it: Trg-ERR/);
    const older = rows.nth(1);
    expect(await older.getAttribute('data-outcome')).toBe('ack');
    expect(await older.locator('.badge').textContent()).toBe('Trg-Ack');
    expect(await older.locator('.badge').getAttribute('class')).toBe('badge ok');
    expect(await older.locator('td.answer .mono').textContent()).toBe('Trg-Ack  QS_RX_AO_FILTER');
    expect(await older.locator('.resolved').textContent()).toBe('l_philo = 0x20001000');
    // The sequence numbers are the link's QS-RX counter, consecutive, as the target got them.
    const seqs = (await rows.locator('td:nth-child(3)').allTextContents()).map(Number);
    expect(seqs).toEqual(
      scripted.received
        .slice(-2)
        .map((f) => f.seq)
        .reverse(),
    );
    expect(scripted.received.slice(-2).map((f) => f.id)).toEqual([12, 4]); // AO_FILTER, PEEK
  });

  it('says what is wrong with a field, in one sentence under the form, and sends nothing', async () => {
    const before = scripted.received.length;
    /** Fills one field of a command's form, submits it, and reads the problem said under the form. */
    const problemWith = async (command: string, field: string, value: string) => {
      const form = page.locator(`form[data-command=${command}]`);
      await form.locator(`input[name=${field}]`).fill(value);
      await form.locator('button').click();
      const problem = form.locator('ul.field-problems li');
      await problem.waitFor();
      return problem.textContent();
    };
    const peek = page.locator('form[data-command=peek]');
    expect(await problemWith('peek', 'offset', '70000')).toBe('Offset must be at most 65535.');
    expect(await peek.locator('input[name=offset]').getAttribute('aria-invalid')).toBe('true');
    expect(await problemWith('poke', 'items', '1, 300')).toBe(
      "Items (item 2): 300 is out of range: 0..255 (the target's items are 1 byte).",
    );
    expect(await problemWith('currentObject', 'object', 'nope')).toBe(
      "Object: No object named 'nope' in the link's dictionaries (give its address).",
    );
    expect(await page.locator('#command-history tbody tr').count()).toBe(2);
    expect(scripted.received.length).toBe(before);
    await page.screenshot({ path: join(screenshotsDir, 'control-panel.png'), fullPage: true });
    await peek.locator('input[name=offset]').fill('0');
  });

  it('shows the front-end port: who is attached, and releases it', async () => {
    const attached = page.locator('#frontend-state tr[data-key=attached] td');
    expect(await attached.textContent()).toBe(`127.0.0.1:${fe.address().port} (text)`);
    fromPort.length = 0;
    await page.locator('#release-frontend').click();
    await page.locator('#frontend-state tr[data-key=attached] td', { hasText: 'nobody' }).waitFor();
    expect(await page.locator('#release-frontend').isDisabled()).toBe(true);
    // The front-end got DETACH.
    for (let i = 0; i < 200 && fromPort.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(fromPort.map((d) => d[1])).toEqual([0x81]);
    await page.locator('.control-right').screenshot({ path: join(screenshotsDir, 'control-frontend.png') });
  });

  it('shows more of a command answer: data, done with the output, names resolved', async () => {
    const current = page.locator('form[data-command=currentObject]');
    await current.locator('select[name=kind]').selectOption('AP');
    await current.locator('input[name=object]').fill('l_table');
    await current.locator('button').click();
    await page.locator('#command-history tbody tr').nth(2).waitFor();
    await page.locator('form[data-command=peek] button').click();
    await page.locator('#command-history tbody tr').nth(3).waitFor();
    const event = page.locator('form[data-command=event]');
    await event.locator('select[name=prio]').selectOption('post');
    await event.locator('input[name=post]').fill('1');
    await event.locator('input[name=sig]').fill('EAT_SIG');
    await event.locator('input[name=params]').fill('2');
    await event.locator('button').click();
    await page.locator('#command-history tbody tr').nth(4).waitFor();
    const outcomes = await page
      .locator('#command-history tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-outcome')));
    expect(outcomes).toEqual(['done', 'data', 'ack', 'error', 'ack']);
    const done = page.locator('#command-history tbody tr').first();
    expect(await done.locator('.badge').textContent()).toBe('Trg-Done');
    expect(await done.locator('.summary').textContent()).toBe('event prio=1 sig=EAT_SIG params=[2]');
    expect(await done.locator('.resolved').textContent()).toBe('EAT_SIG = 7');
    expect(await done.locator('pre.output').textContent()).toMatch(
      /Trg-Ack {2}QS_RX_EVENT\n.*USER\+000 16\n.*Trg-Done QS_RX_EVENT/,
    );
    const data = page.locator('#command-history tbody tr').nth(1);
    expect(await data.locator('.badge').textContent()).toBe('data');
    expect(await data.locator('td.answer .mono').textContent()).toContain('Trg-Peek');
    await done.locator('details summary').click();
    await page.screenshot({ path: join(screenshotsDir, 'control-history.png'), fullPage: true });
    // On a laptop screen nothing runs off the page sideways.
    await page.setViewportSize({ width: 1024, height: 800 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1024);
    await page.screenshot({ path: join(screenshotsDir, 'control-narrow.png'), fullPage: true });
    await page.setViewportSize({ width: 1400, height: 1000 });
    // The history stays with the tab.
    await page.reload();
    await page.locator('#command-history tbody tr[data-outcome]').nth(4).waitFor();
    expect(
      await page
        .locator('#command-history tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-outcome'))),
    ).toEqual(outcomes);
  });

  it('is read-only with a read-scoped token, and says why', async () => {
    await openLink(served.linkId, READ_TOKEN);
    const notice = page.locator('#control-notice');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/^Read-only: this token may read trace but not control targets/);
    expect(await page.locator('#control-commands form[data-command=info] button').isDisabled()).toBe(true);
    await page.screenshot({ path: join(screenshotsDir, 'control-read-only.png') });
  });

  it('says when no gateway serves the link, and when the link is not QS', async () => {
    await openLink(unserved.linkId, CONTROL_TOKEN);
    const notice = page.locator('#control-notice');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(
      /^No gateway serves link rig9\/uart0 .*Commands cannot reach the target until a gateway serves the link/,
    );
    expect(await page.locator('#control-commands form[data-command=info] button').isDisabled()).toBe(true);
    await page.screenshot({ path: join(screenshotsDir, 'control-no-gateway.png') });
    await openLink(stpLinkId, CONTROL_TOKEN);
    await page.locator('#control-notice', { hasText: 'No control panel' }).waitFor();
    expect(await page.locator('#control-commands').count()).toBe(0);
  });

  it('sets a marker on the live link, and on an STP link offers the time base and the upload', async () => {
    await openLink(served.linkId, CONTROL_TOKEN);
    await page.locator('#marker-form input[name=comment]').fill('from the page');
    await page.locator('#marker-form button').click();
    await page.locator('#marker-result', { hasText: 'Marker set in session' }).waitFor();
    expect(await page.locator('#time-base-form').count()).toBe(0);
    // No gateway serves the STP link: the forms are there, and the answer says why not.
    await openLink(stpLinkId, CONTROL_TOKEN);
    await page.locator('#time-base-form input[name=offsetNs]').fill('1000000');
    await page.locator('#time-base-form button').click();
    await page.locator('#marker-result.problem', { hasText: 'no gateway serves link rig8/stp0' }).waitFor();
    expect(await page.locator('#upload-form input[type=file]').count()).toBe(1);
  });
});
