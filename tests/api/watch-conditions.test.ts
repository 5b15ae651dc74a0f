// Watch rules through the api on real NATS and Postgres, one condition at a time: live
// records published as a decoder's are seen, link states as storage keeps them. Who may
// change rules, a count within a window, gaps, a new target build, a disconnected link, a
// silenced rule (alerts kept, nobody told), and an acknowledgement.

import type { Alert } from '@tracehub/api-contract';
import type { TraceRecord } from '@tracehub/contracts';
import { markSessionEnded } from '@tracehub/db';
import { transitionRecord, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishLive } from '../support/publish-live.js';
import { storeSessionStart } from '../support/stored-session.js';
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
});
