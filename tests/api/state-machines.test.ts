// Issue 17: the state machines of a QS session's objects, from real captures stored as storage
// stores them; what is expected is counted from the reference qspy's text of each capture,
// never from what the route answered.
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type ExpectedMachine, qspyStateMachines } from '../support/qspy-state-machines.js';
import { storeStpFixture } from '../support/stp-fixture-session.js';
import { expectScanLimited, type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;

const auth = { authorization: `Bearer ${READ_TOKEN}` };
const get = (url: string) => api.app.inject({ url, headers: auth });

/** A state no dictionary named is its handler's address: qspy prints 8 hex digits, the records the pointer's size. */
const address = (name: string) => (/^0x[0-9A-F]+$/i.test(name) ? `0x${BigInt(name).toString(16)}` : name);

/** A signal no dictionary named is its number: qspy prints it with leading zeros. */
const signal = (sig: string) => (/^\d+$/.test(sig) ? String(Number(sig)) : sig);
const signals = (counts: Array<{ sig: string; count: number }>) => counts.map((c) => ({ ...c, sig: signal(c.sig) }));

/** A machine with its transitions in one fixed order and its addresses and numbers alike, to compare as sets. */
const sorted = (m: ExpectedMachine) => ({
  ...m,
  states: m.states.map((s) => ({
    ...s,
    name: address(s.name),
    internal: signals(s.internal),
    dispatched: signals(s.dispatched),
    ignored: signals(s.ignored),
    unhandled: signals(s.unhandled),
  })),
  transitions: m.transitions
    .map((t) => ({
      ...t,
      from: t.from === null ? null : address(t.from),
      to: address(t.to),
      sig: t.sig === null ? null : signal(t.sig),
    }))
    .sort((a, b) =>
      JSON.stringify([a.kind, a.from, a.to, a.sig]) < JSON.stringify([b.kind, b.from, b.to, b.sig]) ? -1 : 1,
    ),
});

beforeAll(async () => {
  api = await testApi('statemachines');
  const { db } = api;
  await storeQsFixture(db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's-dpp', startNs: T0 });
  // Internal transitions (TServer_busy handles NEW_REQUEST_SIG without leaving).
  await storeQsFixture(db, 'defer', { rig: 'rig1', link: 'uart1', session: 's-defer', startNs: T0 });
  // Nested initial transitions, history, entry and exit points, 64-bit pointers.
  await storeQsFixture(db, 'fmt_v64', { rig: 'rig1', link: 'uart2', session: 's-v64', startNs: T0 });
  await storeStpFixture(db, 'v2_gerr', { rig: 'rig1', link: 'stm0', session: 's-stp', startNs: T0 });
});

afterAll(() => api?.close());

describe('GET /api/v1/sessions/{id}/state-machines', () => {
  it("gives every object's states and transitions of dpp_qv with the counts qspy's text has", async () => {
    const res = await get('/api/v1/sessions/s-dpp/state-machines');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { session: string; records: number; machines: ExpectedMachine[] };
    const expected = qspyStateMachines('dpp_qv');
    expect(expected.map((m) => m.obj)).toEqual(
      expect.arrayContaining(['Table_inst', 'Philo_inst[0]', 'Philo_inst[4]']),
    );
    expect(body.machines.map(sorted)).toEqual(expected.map(sorted));
    // Most frequent first.
    for (const m of body.machines)
      for (let i = 1; i < m.transitions.length; i++)
        expect(m.transitions[i - 1].count).toBeGreaterThanOrEqual(m.transitions[i].count);
    // The initial transition once per object (Init===>), not again as St-Init from the top state.
    const table = body.machines.find((m) => m.obj === 'Table_inst')!;
    expect(table.transitions.filter((t) => t.from === null)).toEqual([
      { from: null, to: 'Table_serving', sig: null, kind: 'initial', count: 1 },
    ]);
    expect(table.states.map((s) => s.name)).not.toContain('QHsm_top');
    // Added up from the blocks' summaries: no record decoded.
    expect(Number(res.headers['x-tracehub-scanned-bytes'])).toBe(0);
  });

  it('counts internal transitions, and nested initial transitions, history, entry and exit points', async () => {
    for (const [session, fixture] of [
      ['s-defer', 'defer'],
      ['s-v64', 'fmt_v64'],
    ]) {
      const res = await get(`/api/v1/sessions/${session}/state-machines`);
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json().machines as ExpectedMachine[]).map(sorted)).toEqual(qspyStateMachines(fixture).map(sorted));
    }
    const defer = qspyStateMachines('defer').find((m) => m.obj === 'TServer_inst')!;
    expect(defer.states.find((s) => s.name === 'TServer_busy')!.internal.length).toBeGreaterThan(0);
    const kinds = new Set(qspyStateMachines('fmt_v64').flatMap((m) => m.transitions.map((t) => t.kind)));
    expect(kinds).toEqual(new Set(['initial', 'state-initial', 'transition', 'history', 'entry-point', 'exit-point']));
  });

  it("gives one object's machine with obj=, reading only the blocks that hold its records", async () => {
    const all = await get('/api/v1/sessions/s-dpp/state-machines');
    const res = await get(`/api/v1/sessions/s-dpp/state-machines?obj=${encodeURIComponent('Philo_inst[2]')}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().machines.map(sorted)).toEqual(
      qspyStateMachines('dpp_qv')
        .filter((m) => m.obj === 'Philo_inst[2]')
        .map(sorted),
    );
    expect(Number(res.headers['x-tracehub-scanned-bytes'])).toBeLessThanOrEqual(
      Number(all.headers['x-tracehub-scanned-bytes']),
    );
    const none = await get('/api/v1/sessions/s-dpp/state-machines?obj=nobody');
    expect(none.json()).toEqual({ session: 's-dpp', records: 0, machines: [] });
  });

  it('answers 404 for an unknown session, 400 for a bad id or an STP session, 401 without a token', async () => {
    const unknown = await get('/api/v1/sessions/nope/state-machines');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toMatch(/no session nope/);
    for (const id of ['a\u0000b', 'x'.repeat(65)]) {
      const res = await get(`/api/v1/sessions/${encodeURIComponent(id)}/state-machines`);
      expect(res.statusCode, JSON.stringify(id)).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    }
    const badObj = await get('/api/v1/sessions/s-dpp/state-machines?obj=');
    expect(badObj.statusCode).toBe(400);
    expect(badObj.json().detail).toMatch(/obj/);
    const stp = await get('/api/v1/sessions/s-stp/state-machines');
    expect(stp.statusCode).toBe(400);
    expect(stp.json().detail).toMatch(/state machines are QS's/);
    expect((await api.app.inject({ url: '/api/v1/sessions/s-dpp/state-machines' })).statusCode).toBe(401);
  });

  it('reads the records of blocks stored before blocks kept tallies: the same machines, a 422 past the scan limit', async () => {
    const fromTallies = await get('/api/v1/sessions/s-dpp/state-machines');
    // As blocks written before migration 0012 read.
    await api.db.updateTable('record_blocks').set({ machines: null }).where('session', '=', 's-dpp').execute();
    const fromRecords = await get('/api/v1/sessions/s-dpp/state-machines');
    expect(fromRecords.statusCode, fromRecords.body).toBe(200);
    expect(Number(fromRecords.headers['x-tracehub-scanned-bytes'])).toBeGreaterThan(0);
    expect(fromRecords.json()).toEqual(fromTallies.json());
    await expectScanLimited(api, '/api/v1/sessions/s-dpp/state-machines');
  });
});
