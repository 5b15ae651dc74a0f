// Issue 17: the state machines of a QS session's objects on the session page, from real captures
// stored as storage stores them; what the page must show is counted from the reference qspy's
// text of each capture.
import { join } from 'node:path';
import { T0 } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type ExpectedMachine, qspyStateMachines } from '../support/qspy-state-machines.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';

let dashboard: DashboardOnBackends;
let page: Page;
let base: string;

beforeAll(async () => {
  dashboard = await dashboardOnFreshBackends('statesweb', {
    folder: 'dashboard-dist-states',
    height: 1000,
    seed: async ({ db }) => {
      await storeQsFixture(db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's-dpp', startNs: T0 });
      await storeQsFixture(db, 'defer', { rig: 'rig1', link: 'uart1', session: 's-defer', startNs: T0 });
      await storeQsFixture(db, 'fmt_v64', { rig: 'rig1', link: 'uart2', session: 's-v64', startNs: T0 });
    },
  });
  ({ base, page } = dashboard);
  // The token arrives once in the URL and stays in localStorage.
  await dashboard.signIn(READ_TOKEN, '/fleet');
});

afterAll(() => dashboard?.close());

const machineOf = (fixture: string, obj: string): ExpectedMachine => {
  const m = qspyStateMachines(fixture).find((x) => x.obj === obj);
  if (!m) throw new Error(`${fixture} has no state machine of ${obj}`);
  return m;
};

/** Checks that the diagram and the tables show every state and transition of `m`, with its counts. */
async function expectMachine(m: ExpectedMachine) {
  const diagram = page.locator(`#state-machine svg[data-obj="${m.obj}"]`);
  await diagram.waitFor();
  expect(await diagram.locator('g.state').count()).toBe(m.states.length);
  for (const s of m.states) {
    const box = diagram.locator(`g.state[data-state="${s.name}"]`);
    expect(await box.locator('text.entered').textContent()).toBe(`entered ×${s.entries}`);
    for (const i of s.internal.slice(0, 4))
      expect(await box.locator('text.internal').allTextContents()).toContain(`${i.sig} / ×${i.count}`);
    const row = page.locator(`#sm-states tr[data-state="${s.name}"]`);
    expect(await row.locator('td[data-col=entries]').textContent()).toBe(String(s.entries));
    expect(await row.locator('td[data-col=exits]').textContent()).toBe(String(s.exits));
  }
  // One label line per transition, on the arrow between its two states.
  expect(await diagram.locator('g.labels text.label').count()).toBe(m.transitions.length);
  expect(await page.locator('#sm-transitions tr[data-kind]').count()).toBe(m.transitions.length);
  for (const t of m.transitions) {
    const where = `[data-from="${t.from ?? ''}"][data-to="${t.to}"]`;
    const text = t.kind === 'transition' ? `${t.sig} ×${t.count}` : `${t.kind.replace('-', ' ')} ×${t.count}`;
    expect(await diagram.locator(`g.labels g.transition${where} text.label`).allTextContents()).toContain(text);
    expect(await diagram.locator(`g.transitions g.transition${where} path`).count()).toBeGreaterThan(0);
    const row = page.locator(`#sm-transitions tr${where}[data-sig="${t.sig ?? ''}"][data-kind="${t.kind}"]`);
    expect(await row.locator('td[data-col=count]').textContent()).toBe(String(t.count));
  }
}

describe('state machines on the session page in Chromium', () => {
  it("draws an active object's states and the transitions seen, with counts, from the session page", async () => {
    await page.goto(`${base}/#/session/s-dpp`);
    await page.locator('nav.tabs a', { hasText: 'State machines' }).click();
    await page.locator('#state-machine svg').waitFor();
    // The first object by name, kept in the URL.
    expect(decodeURIComponent(page.url())).toContain('view=states&obj=Philo_inst[0]');
    const philo = machineOf('dpp_qv', 'Philo_inst[0]');
    // dpp has what the view is for: a cycle of three states, each entered more than once.
    expect(philo.states.map((s) => s.name).sort()).toEqual(['Philo_eating', 'Philo_hungry', 'Philo_thinking']);
    await expectMachine(philo);
    const objects = await page.locator('#sm-objects a').allTextContents();
    expect(objects).toEqual(qspyStateMachines('dpp_qv').map((m) => m.obj));
    await page.screenshot({ path: join(screenshotsDir, 'state-machine.png'), fullPage: true });

    await page.locator('#sm-objects a[data-obj="Table_inst"]').click();
    await page.locator('#state-machine svg[data-obj="Table_inst"]').waitFor();
    expect(page.url()).toContain('obj=Table_inst');
    await expectMachine(machineOf('dpp_qv', 'Table_inst'));
    await page.locator('#state-machine').screenshot({ path: join(screenshotsDir, 'state-machine-table.png') });
  });

  it('lists internal transitions inside their state, and a count opens the records it counts', async () => {
    await page.goto(`${base}/#/session/s-defer?view=states&obj=TServer_inst`);
    const server = machineOf('defer', 'TServer_inst');
    expect(server.states.some((s) => s.internal.length > 0)).toBe(true);
    await expectMachine(server);
    await page.screenshot({ path: join(screenshotsDir, 'state-machine-internal.png'), fullPage: true });
    const busiest = server.transitions.find((t) => t.kind === 'transition')!;
    const row = page.locator(
      `#sm-transitions tr[data-from="${busiest.from}"][data-to="${busiest.to}"][data-sig="${busiest.sig}"]`,
    );
    await row.locator('td[data-col=count] a').click();
    await page.locator('#search-status', { hasText: new RegExp(`^${busiest.count} records$`) }).waitFor();
    expect(await page.locator('.vrow').first().textContent()).toContain(`Sig=${busiest.sig}`);
  });

  it('draws nested initial transitions, history, entry and exit points apart from the transitions', async () => {
    await page.goto(`${base}/#/session/s-v64?view=states&obj=l_tester`);
    const tester = machineOf('fmt_v64', 'l_tester');
    const diagram = page.locator('#state-machine svg[data-obj="l_tester"]');
    await diagram.waitFor();
    expect(await diagram.locator('g.state').count()).toBe(tester.states.length);
    expect(await diagram.locator('g.labels text.label').count()).toBe(tester.transitions.length);
    for (const kind of ['state-initial', 'history', 'entry-point', 'exit-point']) {
      const expected = tester.transitions.filter((t) => t.kind === kind).length;
      expect(expected, kind).toBeGreaterThan(0);
      expect(await page.locator(`#sm-transitions tr[data-kind="${kind}"]`).count(), kind).toBe(expected);
      expect(await diagram.locator(`g.transitions g.transition.${kind}`).count(), kind).toBeGreaterThan(0);
    }
    await page.locator('#state-machine').screenshot({ path: join(screenshotsDir, 'state-machine-nested.png') });
  });

  it('opens the object named in the URL, and the first one for an unknown name', async () => {
    await page.goto(`${base}/#/session/s-dpp?view=states&obj=${encodeURIComponent('Philo_inst[3]')}`);
    await expectMachine(machineOf('dpp_qv', 'Philo_inst[3]'));
    await page.goto(`${base}/#/session/s-dpp?view=states&obj=nobody`);
    await page.locator('#state-machine svg[data-obj="Philo_inst[0]"]').waitFor();
    expect(decodeURIComponent(page.url())).toContain('obj=Philo_inst[0]');
  });
});
