// Watch rules through the api on real NATS and Postgres, one condition at a time: live
// records published as a decoder's are seen, link states as storage keeps them. Who may
// change rules, a count within a window, gaps, a new target build, a disconnected link, a
// silenced rule (alerts kept, nobody told), and an acknowledgement; webhook addresses masked
// for read scope, a rule disabled or removed resolving what it fired, and a rule not saved
// previewed over stored history.

import type { Alert } from '@tracehub/api-contract';
import type { TraceRecord } from '@tracehub/contracts';
import { markSessionEnded } from '@tracehub/db';
import { transitionRecord, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishLive } from '../support/publish-live.js';
import { storeRecordBatches, storeSessionStart } from '../support/stored-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { CONTROL_TOKEN, READ_TOKEN } from './fixture-data.js';

let api: TestApi;
const receiver = new WebhookReceiver({ failFirst: false });
let hook: string;

beforeAll(async () => {
  api = await testApi('watchconditions', { settings: { watch: { leaseMs: 10_000, tickMs: 50, dashboardUrl: '' } } });
  hook = await receiver.listen();
});

afterAll(async () => {
  await api?.close();
  await receiver.close();
});

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, token = CONTROL_TOKEN) {
  const res = await api.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null, type: res.headers['content-type'] };
}

async function addRule(body: object) {
  const res = await call('POST', '/rules', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Adds rule `id` (named as its id) with a condition and scope, and webhooks when `told`. */
const watch = (id: string, condition: object, scope: object, told = false) =>
  addRule({ id, name: id, condition, scope, ...(told ? { webhooks: [{ url: hook }] } : {}) });

type AlertBody = Alert;

const alertsOf = async (rule: string): Promise<AlertBody[]> => (await call('GET', `/alerts?rule=${rule}`)).body.alerts;
const firingOf = (rule: string) =>
  until(`${rule} firing`, async () => (await alertsOf(rule)).find((a) => a.state === 'firing'));
const resolvedOf = (rule: string) =>
  until(`${rule} resolved`, async () => (await alertsOf(rule)).find((a) => a.state === 'resolved'));

const counters = new Map<string, number>();
/** Records of `rig/uart0` session `session`, numbered on from the last, received now. */
function recordsNow(rig: string, session: string, count: number, over: Partial<TraceRecord> = {}): TraceRecord[] {
  const first = counters.get(session) ?? 0;
  counters.set(session, first + count);
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  return Array.from({ length: count }, (_, i) =>
    transitionRecord({ rig, link: 'uart0', session }, first + i, { hostNs: (nowNs + BigInt(i)).toString(), ...over }),
  );
}

function publish(records: TraceRecord[]): void {
  publishLive(api.bus, records, records[0].seq);
}

describe('watch rules', () => {
  it('are changed with control scope, read with read scope, and refused with a problem when malformed', async () => {
    const rule = { name: 'asserts', preset: 'qs-assert' };
    expect((await call('POST', '/rules', rule, READ_TOKEN)).status).toBe(403);
    const bad = await call('POST', '/rules', { name: 'x', condition: { kind: 'silent', seconds: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.type).toContain('application/problem+json');
    expect((await call('POST', '/rules', { name: 'x', preset: 'no-such' })).status).toBe(400);
    const added = await addRule({ id: 'scoped', ...rule, scope: { rigs: ['lab-*'] } });
    expect(added).toMatchObject({
      id: 'scoped',
      condition: { kind: 'records', filter: { names: ['QS_ASSERT_FAIL'] } },
    });
    expect((await call('POST', '/rules', { id: 'scoped', ...rule })).status).toBe(409);
    expect((await call('GET', '/rules/scoped', undefined, READ_TOKEN)).status).toBe(200);
    expect((await call('GET', '/alerts', undefined, READ_TOKEN)).status).toBe(200);
    expect((await call('POST', '/rules/scoped/silence', { seconds: 10 }, READ_TOKEN)).status).toBe(403);
    expect((await call('GET', '/rules/nothing-here')).status).toBe(404);
    expect((await call('DELETE', '/rules/scoped')).status).toBe(204);
    expect((await call('DELETE', '/rules/scoped')).status).toBe(404);
  });

  it('fire at a count within a window, naming the first record of it, and resolve when the window passes', async () => {
    await watch(
      'three',
      { kind: 'records', filter: { qsSig: 'TIMEOUT_SIG', names: ['QS_QEP_TRAN'] }, count: 3, windowSeconds: 1 },
      { rigs: ['rigC'] },
      true,
    );
    // A rule that fires on any record of rigC: once it has, the batch before it was judged too.
    await watch('any', { kind: 'records', filter: {} }, { rigs: ['rigC'] });
    publish(recordsNow('rigC', 'c1', 2));
    await firingOf('any');
    expect(await alertsOf('three')).toEqual([]);
    const third = recordsNow('rigC', 'c1', 1);
    publish(third);
    const fired = await firingOf('three');
    expect(fired).toMatchObject({ session: 'c1', seq: 0 });
    await resolvedOf('three');
    await until('both notices', () => receiver.posts.filter((p) => p.delivery.startsWith(`${fired.id}-`)).length === 2);
  });

  it('count sequence gaps and new target builds, and leave out what is out of scope', async () => {
    await watch('gaps', { kind: 'gaps', windowSeconds: 60 }, { links: ['uart?'] });
    await watch('build', { kind: 'target-info-change' }, { rigs: ['rigG'] });
    const info = (build: string) => ({
      kind: 'info' as const,
      name: 'QS_TARGET_INFO',
      type: 64,
      fields: { reset: true, build },
    });
    publish(recordsNow('rigG', 'g1', 1, info('20260101_000000')));
    publish(recordsNow('rigG', 'g1', 1, { kind: 'error', name: 'SEQ_GAP', type: -2 }));
    expect(await firingOf('gaps')).toMatchObject({ rig: 'rigG', session: 'g1', seq: 1 });
    // The same build again is no change; another is.
    publish(recordsNow('rigG', 'g2', 1, info('20260101_000000')));
    publish(recordsNow('rigG', 'g3', 1, info('20260202_000000')));
    expect(await firingOf('build')).toMatchObject({ session: 'g3', seq: 0 });
    expect((await alertsOf('build')).length).toBe(1);
    // A gap on a link out of the gap rule's scope.
    publishLive(
      api.bus,
      [transitionRecord({ rig: 'rigG', link: 'spi0', session: 'g4' }, 0, { kind: 'error', name: 'SEQ_GAP' })],
      0,
    );
    await watch('sentinel', { kind: 'records', filter: { text: 'SENTINEL' } }, {});
    publish(recordsNow('rigG', 'g5', 1, { text: 'SENTINEL' }));
    // Judged after the gap on spi0 (records are judged in the order they come).
    await firingOf('sentinel');
    expect((await alertsOf('gaps')).map((a) => a.rig)).toEqual(['rigG']);
  });

  it('fire on a link disconnected for long enough, and resolve when it is back', async () => {
    await watch('gone', { kind: 'disconnected', seconds: 0.3 }, { rigs: ['rigD'] });
    const startNs = BigInt(Date.now() - 1000) * 1_000_000n;
    await storeSessionStart(api.db, { rig: 'rigD', link: 'uart0', session: 'd1', startNs }, 'qs');
    await markSessionEnded(api.db, 'd1', new Date(), 1);
    const fired = await firingOf('gone');
    expect(fired).toMatchObject({ rig: 'rigD', session: 'd1', seq: null });
    publish(recordsNow('rigD', 'd2', 1));
    await resolvedOf('gone');
  });

  it('keep the alerts of a silenced rule without telling anyone, and take acknowledgements', async () => {
    await watch('hushed', { kind: 'records', filter: { text: 'HUSH' } }, { rigs: ['rigS'] }, true);
    const silenced = await call('POST', '/rules/hushed/silence', { seconds: 600 });
    expect(silenced.body.silencedUntil).not.toBeNull();
    await watch('loud', { kind: 'records', filter: { text: 'LOUD' } }, { rigs: ['rigS'] }, true);
    publish(recordsNow('rigS', 's1', 1, { text: 'HUSH now' }));
    publish(recordsNow('rigS', 's1', 1, { text: 'LOUD now' }));
    const fired = await firingOf('hushed');
    // The loud rule's notice, told after the hushed alert was stored: the hushed one was not told.
    const loud = await firingOf('loud');
    await until('the loud notice', () => receiver.posts.some((p) => p.delivery === `${loud.id}-firing`));
    expect(receiver.posts.filter((p) => p.delivery.startsWith(`${fired.id}-`))).toEqual([]);
    expect((await call('POST', `/alerts/${fired.id}/acknowledge`, { by: 'ana' }, READ_TOKEN)).status).toBe(403);
    const acked = await call('POST', `/alerts/${fired.id}/acknowledge`, { by: 'ana' });
    expect(acked.body).toMatchObject({ id: fired.id, acknowledgedBy: 'ana', state: 'firing' });
    expect(acked.body.acknowledgedAt).not.toBeNull();
    expect((await call('POST', '/alerts/999999/acknowledge', { by: 'ana' })).status).toBe(404);
  });

  it("show a webhook's address whole to control scope and only its origin to read scope", async () => {
    const secretUrl = 'https://hooks.example.com/services/T0001/B0002/s3cretPart?token=t0ken';
    await addRule({
      id: 'masked',
      name: 'masked',
      condition: { kind: 'records', filter: { text: 'NEVER-SENT' } },
      scope: { rigs: ['rigM'] },
      webhooks: [{ url: secretUrl, secret: 'signing-secret-1' }, { url: 'http://user:pw@10.0.0.9:8080/' }],
    });
    for (const read of [
      await call('GET', '/rules/masked', undefined, READ_TOKEN),
      await call('GET', '/rules', undefined, READ_TOKEN),
    ]) {
      expect(read.status).toBe(200);
      const rule = 'rules' in read.body ? read.body.rules.find((r: { id: string }) => r.id === 'masked') : read.body;
      expect(rule.webhooks.map((w: { url: string; signed: boolean }) => [w.url, w.signed])).toEqual([
        ['https://hooks.example.com/***', true],
        ['http://10.0.0.9:8080/', false],
      ]);
      expect(JSON.stringify(read.body)).not.toMatch(/s3cret|t0ken|signing-secret|pw@/);
    }
    const control = await call('GET', '/rules/masked');
    expect(control.body.webhooks.map((w: { url: string }) => w.url)).toEqual([
      secretUrl,
      'http://user:pw@10.0.0.9:8080/',
    ]);
    expect(JSON.stringify(control.body)).not.toContain('signing-secret');
  });

  it('resolve the firing alerts of a rule disabled, and of one removed, telling the webhooks why', async () => {
    const condition = { kind: 'records', filter: { text: 'TRIP' } };
    await watch('switched', condition, { rigs: ['rigO'] }, true);
    await watch('removed', condition, { rigs: ['rigO'] }, true);
    publish(recordsNow('rigO', 'o1', 1, { text: 'TRIP 1' }));
    const switched = await firingOf('switched');
    const removed = await firingOf('removed');
    const disabled = await call('PUT', '/rules/switched', {
      name: 'switched',
      condition,
      scope: { rigs: ['rigO'] },
      webhooks: [{ url: hook }],
      enabled: false,
    });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, firing: 0 });
    expect(await alertsOf('switched')).toMatchObject([{ id: switched.id, state: 'resolved' }]);
    expect((await call('DELETE', '/rules/removed')).status).toBe(204);
    const notice = (id: number) =>
      until(`${id} resolved notice`, () => receiver.posts.find((p) => p.delivery === `${id}-resolved`));
    expect(JSON.parse((await notice(switched.id)).body).text).toContain('(rule disabled)');
    expect(JSON.parse((await notice(removed.id)).body).text).toContain('(rule removed)');
    // A record the disabled rule would fire on: once a rule fires on the one after it, it was judged, and not fired.
    await watch('after', { kind: 'records', filter: { text: 'LATER' } }, { rigs: ['rigO'] });
    publish(recordsNow('rigO', 'o1', 1, { text: 'TRIP 2' }));
    publish(recordsNow('rigO', 'o1', 1, { text: 'LATER' }));
    await firingOf('after');
    expect(await alertsOf('switched')).toMatchObject([{ id: switched.id, state: 'resolved' }]);
    expect(receiver.posts.filter((p) => p.delivery.startsWith(`${switched.id}-`))).toHaveLength(2);
    expect(receiver.posts.filter((p) => p.delivery.startsWith(`${removed.id}-`))).toHaveLength(2);
  });

  it('preview a rule not saved over stored history, as the saved rule would backtest, and refuse a malformed one', async () => {
    const startNs = BigInt(Date.now() - 600_000) * 1_000_000n;
    const place = { rig: 'rigP', link: 'uart0', session: 'p1', startNs };
    await storeSessionStart(api.db, place, 'qs');
    const stored = recordsNow('rigP', 'p1', 3).map((r, i) => ({
      ...r,
      hostNs: (startNs + BigInt(i) * 1_000_000_000n).toString(),
      text: i === 1 ? 'PREVIEW me' : r.text,
    }));
    await storeRecordBatches(api.db, stored);
    const window = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    const rule = {
      name: 'draft',
      condition: { kind: 'records', filter: { text: 'PREVIEW' } },
      scope: { rigs: ['rigP'] },
    };
    const preview = await call('POST', `/rules/backtest?${window}`, rule, READ_TOKEN);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.alerts).toMatchObject([{ rig: 'rigP', link: 'uart0', session: 'p1', seq: stored[1].seq }]);
    expect(await alertsOf('draft')).toEqual([]);
    await addRule({ id: 'draft', ...rule });
    const saved = await call('POST', `/rules/draft/backtest?${window}`, {}, READ_TOKEN);
    expect({ ...preview.body, rule: 'draft' }).toEqual(saved.body);
    for (const bad of [
      { name: 'x' },
      { name: 'x', condition: { kind: 'silent', seconds: 0 } },
      { ...rule, webhooks: [{ url: hook }] },
      { ...rule, scope: { rigs: 'rigP' } },
    ]) {
      const refused = await call('POST', `/rules/backtest?${window}`, bad, READ_TOKEN);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.type).toContain('application/problem+json');
    }
    expect((await call('POST', '/rules/backtest?from=x&to=y', rule, READ_TOKEN)).status).toBe(400);
  });
});
