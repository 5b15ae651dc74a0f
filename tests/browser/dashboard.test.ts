import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { App } from '@tracehub/api';
import type { TraceRecord } from '@tracehub/contracts';
import { fixturePath, qspySequence, T0 } from '@tracehub/tests/support';
import type { Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN } from '../api/fixture-data.js';
import { offlineDecode } from '../pipeline/harness.js';
import { publishLive } from '../support/publish-live.js';
import { type StoredFixture, storeQsFixture } from '../support/qs-fixture-session.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';
import { storeRecordBatches, storeSessionStart } from '../support/stored-session.js';

let dashboard: DashboardOnBackends;
let app: App;
let page: Page;
let base: string;
let dpp: StoredFixture;
let stp: TraceRecord[];

const S = 1_000_000_000n;

/** The text of a file the page offered for download. */
async function readDownload(download: Download): Promise<string> {
  const stream = await download.createReadStream();
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('browser', {
    folder: 'dashboard-dist',
    height: 900,
    settings: { liveQueueRecords: 20_000 },
    seed: async ({ db }) => {
      dpp = await storeQsFixture(db, 'dpp_qv', { rig: 'rig17', link: 'uart0', session: 's-dpp', startNs: T0 });
      await storeQsFixture(db, 'defer', { rig: 'rig4', link: 'uart2', session: 's-defer', startNs: T0 + 100n * S });
      // An STP link: a real capture as `tracehub decode` decodes it, stored as storage stores it.
      const place = { rig: 'rig8', link: 'stp0', session: 's-stp', startNs: T0 + 200n * S };
      stp = (await offlineDecode(fixturePath('stp', 'coresight_stm_only.stp'), 'stp')).map((r) => ({
        ...r,
        rig: place.rig,
        link: place.link,
        session: place.session,
        hostNs: String(place.startNs),
      }));
      await storeSessionStart(db, place, 'stp');
      await storeRecordBatches(db, stp);
    },
  });
  ({ app, base, page } = dashboard);
  // The token arrives once in the URL and stays in localStorage.
  await dashboard.signIn(READ_TOKEN, '/fleet');
});

afterAll(() => dashboard?.close());

describe('dashboard in Chromium', () => {
  it('shows the fleet: every rig and link with its counts', async () => {
    await page.goto(`${base}/#/fleet`);
    const row = page.locator('tr[data-link="rig17/uart0"]');
    await row.waitFor();
    expect(await row.locator('td[data-col=records]').textContent()).toBe(String(dpp.records.length));
    expect(await page.locator('tr[data-link="rig4/uart2"]').count()).toBe(1);
    await page.screenshot({ path: join(screenshotsDir, 'fleet.png') });
    // Counts open the records they count.
    await row.locator('td[data-col=records] a').click();
    await page.locator('#search-status', { hasText: `${dpp.records.length} records` }).waitFor();
    expect(page.url()).toContain('#/search?rig=rig17&link=uart0');
  });

  it('tails records live as they are published', async () => {
    await page.goto(`${base}/#/live?rig=rig5`);
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    for (let i = 0; i < 200 && app.liveHub.clientCount === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const total = 5000;
    for (let b = 0; b < total / 500; b++) {
      const records: TraceRecord[] = Array.from({ length: 500 }, (_, i) => ({
        ...dpp.records[(b * 500 + i) % dpp.records.length],
        rig: 'rig5',
        session: 'live',
        seq: b * 500 + i,
      }));
      publishLive(dashboard.backends.bus, records, b);
    }
    await page.locator('#live-count', { hasText: `${total} records` }).waitFor({ timeout: 15_000 });
    // Only the rows in view exist in the DOM.
    const rows = await page.locator('.vrow').count();
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(200);
    expect(await page.locator('.vrow').last().getAttribute('data-seq')).toBe(String(total - 1));
    await page.screenshot({ path: join(screenshotsDir, 'live.png') });
  });

  it('searches history with a filter', async () => {
    await page.goto(`${base}/#/search?session=s-dpp&name=PHILO_STAT`);
    const expected = dpp.records.filter((r) => r.name === 'PHILO_STAT').length;
    await page.locator('#search-status', { hasText: `${expected} records` }).waitFor();
    const first = await page.locator('.vrow').first().textContent();
    expect(first).toContain('PHILO_STAT');
    await page.screenshot({ path: join(screenshotsDir, 'search.png') });
  });

  it('draws the sequence diagram of dpp_qv with each publish, time event and initial transition once', async () => {
    await page.goto(`${base}/#/session/s-dpp`);
    await page.locator('#sequence svg.sequence').waitFor();
    // What there is to draw, from the reference qspy's text of the capture.
    const reference = qspySequence('dpp_qv');
    const seqs = async (selector: string) =>
      (await page.locator(selector).evaluateAll((els) => els.map((e) => e.getAttribute('data-seq')))).map(Number);
    const publishes = await seqs('#sequence g.msg.publish');
    expect(publishes).toHaveLength(reference.publishes.length);
    expect(publishes.map((s) => dpp.records[s].name)).toEqual(publishes.map(() => 'QS_QF_PUBLISH'));
    const timeEvents = await seqs('#sequence g.msg.timeout');
    expect(timeEvents).toHaveLength(reference.timeEvents);
    expect(new Set(timeEvents.map((s) => dpp.records[s].name))).toEqual(new Set(['QS_QF_TIMEEVT_POST']));
    const inits = await seqs('#sequence g.state-change.init');
    expect(inits).toHaveLength(reference.initialTransitions);
    expect(new Set(inits.map((s) => dpp.records[s].name))).toEqual(new Set(['QS_QEP_INIT_TRAN']));
    // AO-Posts that delivered a publish or a time event are not drawn a second time.
    expect(await page.locator('#sequence g.msg.post').count()).toBe(reference.directPosts);
    expect(await page.locator('#sequence g.state-change:not(.init)').count()).toBe(reference.transitions);
    const all = await seqs('#sequence [data-seq]');
    expect(new Set(all).size).toBe(all.length);
    // Signal names are drawn whole: each arrow's label (underscores included) ends above its line.
    const clear = await page.locator('#sequence g.msg:has(line) text').evaluateAll((texts) =>
      texts.map((t) => {
        const line = t.parentElement!.querySelector('line')!.getBoundingClientRect();
        return { text: t.textContent, clear: t.getBoundingClientRect().bottom <= line.top - 1 };
      }),
    );
    expect(clear.length).toBeGreaterThan(0);
    expect(clear.filter((c) => c.text?.includes('_') && !c.clear)).toEqual([]);
    const names = await page.locator('#sequence text.participant').allTextContents();
    expect(names).toEqual(expect.arrayContaining(['Table_inst', 'Philo_inst[0]', 'l_clock_tick']));
    // The target's description is a table, not JSON.
    expect(await page.locator('table.target-info tr[data-key=version] td').textContent()).toBe('7.4.0');
    expect(await page.locator('.session-info pre').count()).toBe(0);
    await page.screenshot({ path: join(screenshotsDir, 'session.png'), fullPage: false });
  });

  it('zooms, pages and exports the sequence diagram', async () => {
    await page.goto(`${base}/#/session/s-dpp`);
    await page.locator('#sequence svg.sequence').waitFor();
    const width = Number(await page.locator('#sequence svg').getAttribute('width'));
    await page.click('#seq-zoom-out');
    await page.waitForFunction(`Number(document.querySelector('#sequence svg')?.getAttribute('width')) < ${width}`);
    expect(page.url()).toContain('zoom=0.85');
    // Every lane fits in the scrolling box (nothing is cut off on the right).
    const box = await page
      .locator('#sequence')
      .evaluate((el) => ({ scroll: el.scrollWidth, svg: el.querySelector('svg')!.getBoundingClientRect().width }));
    expect(box.scroll).toBeGreaterThanOrEqual(Math.floor(box.svg));
    const [mermaid] = await Promise.all([page.waitForEvent('download'), page.click('#seq-mermaid')]);
    const text = await readDownload(mermaid);
    expect(text.startsWith('sequenceDiagram\n')).toBe(true);
    const reference = qspySequence('dpp_qv');
    expect(text.match(/\(time event\)/g)).toHaveLength(reference.timeEvents);
    const [plantuml] = await Promise.all([page.waitForEvent('download'), page.click('#seq-plantuml')]);
    const puml = await readDownload(plantuml);
    expect(puml).toMatch(/^@startuml\n/);
    expect(puml).toContain('participant "Table_inst"');
    const [svgFile] = await Promise.all([page.waitForEvent('download'), page.click('#seq-svg')]);
    const svgText = await readDownload(svgFile);
    expect(svgText).toContain('<svg');
    expect(svgText.match(/class="msg publish"/g)).toHaveLength(reference.publishes.length);
    // A page of 20 steps at a time, the next one from the URL.
    await page.goto(
      `${base}/#/session/s-dpp?view=sequence&after=${dpp.records.findIndex((r) => r.name === 'QS_QF_PUBLISH')}`,
    );
    await page.locator('#sequence svg.sequence').waitFor();
    const first = Number(await page.locator('#sequence [data-seq]').first().getAttribute('data-seq'));
    expect(dpp.records[first].seq).toBeGreaterThan(dpp.records.findIndex((r) => r.name === 'QS_QF_PUBLISH'));
    await page.screenshot({ path: join(screenshotsDir, 'session-sequence-zoomed.png') });
  });

  it("opens a session's timeline on the target clock from its page, host time one click away", async () => {
    await page.goto(`${base}/#/session/s-dpp`);
    await page.click('#session-timeline');
    await page.locator('#timeline[data-axis=target][data-state=ready]').waitFor();
    expect(page.url()).toContain('axis=target');
    await page.click('#timeline-axis');
    await page.locator('#timeline[data-axis=host][data-state=ready]').waitFor();
    await page.goto(`${base}/#/session/s-dpp`);
    expect(await page.locator('#session-host-timeline').getAttribute('href')).toBe('#/timeline?session=s-dpp');
  });

  it('draws the timeline of a session: a track per active object, states, marks, a record on click', async () => {
    await page.goto(`${base}/#/timeline?session=s-dpp`);
    const canvas = page.locator('#timeline[data-state=ready]');
    await canvas.waitFor();
    expect(await canvas.getAttribute('data-mode')).toBe('detail');
    const rows = JSON.parse((await canvas.getAttribute('data-rows'))!) as Array<[string, string | null, number]>;
    const objects = new Set(
      dpp.records.filter((r) => r.name.startsWith('QS_QEP_') && r.qs?.obj).map((r) => r.qs!.obj as string),
    );
    for (const o of objects) expect(rows.some(([, track]) => track === o)).toBe(true);
    await page.screenshot({ path: join(screenshotsDir, 'timeline.png') });
    // Click the first dispatch to Table_inst: its record shows.
    const from = BigInt((await canvas.getAttribute('data-from'))!);
    const to = BigInt((await canvas.getAttribute('data-to'))!);
    const target = dpp.records.find((r) => r.name === 'QS_QEP_DISPATCH' && r.qs?.obj === 'Table_inst')!;
    const row = rows.find(([, track]) => track === 'Table_inst')!;
    const box = (await canvas.boundingBox())!;
    const x = 210 + (Number(BigInt(target.hostNs) - from) / Number(to - from)) * (box.width - 210);
    await page.mouse.click(box.x + x, box.y + row[2] + 12);
    const record = page.locator('#timeline-record');
    await record.waitFor();
    // Records of one chunk share a host time: the one shown is Table_inst's, at that time.
    const shown = dpp.records[Number(await record.getAttribute('data-seq'))];
    expect(shown.qs?.obj).toBe('Table_inst');
    expect(shown.hostNs).toBe(target.hostNs);
    expect(await record.textContent()).toContain(shown.name);
    // Two links on one host-time axis, from the URL.
    await page.goto(`${base}/#/timeline?session=s-dpp&session=s-defer`);
    await page.locator('#timeline[data-state=ready]').waitFor();
    const both = JSON.parse((await page.locator('#timeline').getAttribute('data-rows'))!) as Array<[string]>;
    expect(new Set(both.map(([s]) => s))).toEqual(new Set(['s-dpp', 's-defer']));
    await page.screenshot({ path: join(screenshotsDir, 'timeline-two-links.png') });
  });

  it('lists sessions with a time range, kept in the URL', async () => {
    await page.goto(`${base}/#/sessions`);
    await page.locator('tr[data-session="s-dpp"]').waitFor();
    expect(await page.locator('tr[data-session]').count()).toBe(3);
    await page.screenshot({ path: join(screenshotsDir, 'sessions.png') });
    await page.fill('form.filters input[name=rig]', 'rig17');
    await page.waitForFunction("document.querySelectorAll('tr[data-session]').length === 1");
    expect(page.url()).toContain('#/sessions?rig=rig17');
    // The fixtures were stored in 2025: nothing in the last 15 minutes.
    await page.selectOption('#time-range', '15m');
    await page.locator('#sessions-status', { hasText: /^0 sessions$/ }).waitFor();
    expect(page.url()).toContain('range=15m');
    // An absolute range around the dpp session, typed into the pickers.
    await page.selectOption('#time-range', 'custom');
    await page.fill('#time-from', '2025-11-24T16:00:00.000');
    await page.fill('#time-to', '2025-11-24T16:10:00.000');
    await page.locator('#time-to').dispatchEvent('change');
    await page.locator('tr[data-session="s-dpp"]').waitFor();
    expect(decodeURIComponent(page.url())).toContain('from=2025-11-24T16:00:00.000Z');
    // The same URL opens the same view.
    await page.goto(page.url());
    await page.reload();
    await page.locator('tr[data-session="s-dpp"]').waitFor();
    expect(await page.locator('#time-range').inputValue()).toBe('custom');
    await page.click('tr[data-session="s-dpp"] a');
    await page.locator('#sequence svg.sequence').waitFor();
  });

  it('shows the newest records without Apply, and an error as one sentence without export links', async () => {
    await page.goto(`${base}/#/search`);
    await page.locator('#search-status', { hasText: '500 records (more available)' }).waitFor();
    await page.fill('form.filters input[name=kind]', 'eror');
    const error = page.locator('#search-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/kind .*one of record, dict, info, marker, error/);
    expect(await page.locator('#exports').isHidden()).toBe(true);
    expect(await page.locator('.vrow').count()).toBe(0);
    await page.screenshot({ path: join(screenshotsDir, 'search-error.png') });
    await page.fill('form.filters input[name=kind]', 'error');
    await page.fill('form.filters input[name=session]', 's-dpp');
    await page.locator('#search-status', { hasText: /^0 records$/ }).waitFor();
    expect(await error.isHidden()).toBe(true);
    expect(await page.locator('#exports').isVisible()).toBe(true);
    expect(page.url()).toContain('kind=error');
  });

  it('shows STP messages of one master and channel', async () => {
    const master = stp.find((r) => r.stp)!.stp!.master;
    const expected = stp.filter((r) => r.stp?.master === master && r.stp.channel === 0);
    // The capture's messages are all on one master and channel, more than one page of them.
    expect(expected.length).toBeGreaterThan(1000);
    await page.goto(`${base}/#/stp?rig=rig8&master=${master}&channel=0`);
    const status = page.locator('#search-status');
    await status.filter({ hasText: '500 records (more available)' }).waitFor();
    // Newest first: the session's last message heads the list.
    const newest = expected.at(-1)!;
    const first = await page.locator('.vrow').first().textContent();
    expect(first).toContain(`#${newest.seq}`);
    expect(first).toContain(newest.text);
    await page.click('#more');
    await status.filter({ hasText: '1000 records (more available)' }).waitFor();
    await page.click('#more');
    await status.filter({ hasText: new RegExp(`^${expected.length} records$`) }).waitFor();
    await page.screenshot({ path: join(screenshotsDir, 'stp.png') });
    await page.goto(`${base}/#/stp?rig=rig8&master=${master}&channel=1`);
    await status.filter({ hasText: /^0 records$/ }).waitFor();
  });

  it('lists the PalmTrace Reporters below the fleet, with their connection', async () => {
    // A Reporter stand-in that listens and reads whatever the bridge sends.
    const reporter = net.createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => reporter.listen(0, '127.0.0.1', resolve));
    const port = (reporter.address() as AddressInfo).port;
    const control = { authorization: `Bearer ${CONTROL_TOKEN}` };
    const added = await app.inject({
      method: 'POST',
      url: '/api/v1/reporters',
      headers: control,
      payload: { id: 'lab1', host: '127.0.0.1', port },
    });
    expect(added.statusCode, added.body).toBe(201);
    try {
      await page.goto(`${base}/#/fleet`);
      const row = page.locator('tr[data-reporter="lab1"]');
      await row.locator('td', { hasText: 'yes' }).waitFor();
      expect(await row.locator('td').nth(1).textContent()).toBe(`127.0.0.1:${port}`);
      expect(await row.locator('td').nth(2).textContent()).toBe('live');
      await page.screenshot({ path: join(screenshotsDir, 'reporters.png') });
    } finally {
      await app.inject({ method: 'DELETE', url: '/api/v1/reporters/lab1', headers: control });
      await new Promise((resolve) => reporter.close(resolve));
    }
  });
});
