// Watch rules on a real pipeline (gateway, QS decoder, storage) with two API processes: a
// target sends a capture with an assertion record and then goes silent on an open
// connection. The assertion rule and the silence rule each fire once (whichever process
// judges them), within 2 s of their cause, a webhook gets one signed POST per state change
// (and the retry after it answered 500), the alerts resolve, and a backtest over the stored
// session lists the alerts the live run raised.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Alert } from '@tracehub/api-contract';
import { fireAlert } from '@tracehub/db';
import { fixturePath, freePort, natsUrl, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../foundation/processes.js';
import { type ApiProcess, startApiProcess } from '../support/api-process.js';
import { connectTargetOnceListening, writeTo } from '../support/tcp-target.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';
import { type ReceivedPost as Post, WebhookReceiver } from '../support/webhook-receiver.js';
import { backendsEnv, cli, type PipelineEnv, removeBusPrefix, requireBuild, startService, stopAll } from './harness.js';

const TOKEN = `watch-${'0123456789abcdef'}`;
const SECRET = 'hook-secret-for-tests';
const SILENT_SECONDS = 1;
const ASSERT_WINDOW_SECONDS = 2;

let backends: TestBackends;
let env: PipelineEnv;
const procs: RunningProcess[] = [];
const receiver = new WebhookReceiver({ failFirst: true });
let hookUrl: string;
let linkPort: number;
const apis: ApiProcess[] = [];

async function metricsText(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return res.text();
}

beforeAll(async () => {
  requireBuild();
  backends = await testBackends('watchrules', { topology: true });
  env = { natsUrl: natsUrl(), databaseUrl: backends.fresh.url, prefix: backends.bus.names.prefix };
  hookUrl = await receiver.listen();
  linkPort = await freePort();
  procs.push(await startService('storage', env));
  procs.push(await startService('decoder-qs', env));
  procs.push(await startService('gateway', env, { TRACEHUB_LINKS: `qs/rigW/uart0=tcp-listen:127.0.0.1:${linkPort}` }));
  for (let i = 0; i < 2; i++) {
    const api = await startApiProcess(env, TOKEN, {
      WATCH_LEASE_MS: '3000',
      WATCH_DASHBOARD_URL: 'http://dashboard.example',
      LOG_LEVEL: 'info',
    });
    procs.push(api.proc);
    apis.push(api);
  }
}, 120_000);

afterAll(async () => {
  await stopAll(procs);
  await receiver.close();
  await backends?.close();
  if (env) await removeBusPrefix(env.natsUrl, env.prefix);
});

type AlertBody = Alert;

describe('watch rules on the live records of two API processes', () => {
  it('fire each alert once within 2 s, tell a webhook once per state change (retried after a 500), resolve, and backtest alike', async () => {
    const [apiA, apiB] = apis;
    const b = apiB.port;
    const webhooks = [{ url: hookUrl, secret: SECRET, timeoutMs: 2000, retries: 3 }];
    const assertRule = await apiA.call('POST', '/rules', {
      id: 'asserts',
      name: 'target assertions',
      preset: 'qs-assert',
      scope: { rigs: ['rig*'], protocols: ['qs'] },
      webhooks,
    });
    expect(assertRule.status, JSON.stringify(assertRule.body)).toBe(201);
    // A preset's window, narrowed so that the alert clears within the test.
    const narrowed = await apiA.call('PUT', '/rules/asserts', {
      name: 'target assertions',
      condition: { kind: 'records', filter: { names: ['QS_ASSERT_FAIL'] }, windowSeconds: ASSERT_WINDOW_SECONDS },
      scope: { rigs: ['rig*'], protocols: ['qs'] },
      webhooks,
    });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    const silentRule = await apiB.call('POST', '/rules', {
      id: 'silence',
      name: 'link silent',
      condition: { kind: 'silent', seconds: SILENT_SECONDS },
      scope: { links: ['uart?'] },
      webhooks,
    });
    expect(silentRule.status, JSON.stringify(silentRule.body)).toBe(201);
    // Read scope sees rules; a rule without condition or preset is refused.
    expect((await apiA.call('POST', '/rules', { name: 'nothing' })).status).toBe(400);
    // Each process judges the rule added on it.
    const rules = await until('each rule judged by one process', async () => {
      const listed = (await apiB.call('GET', '/rules')).body.rules as { id: string; evaluatedBy: string | null }[];
      return listed.every((r) => r.evaluatedBy !== null) && listed;
    });
    expect(new Set(rules.map((r) => r.evaluatedBy)).size).toBe(2);

    // The target connects, sends the capture (its assertion near the end), and stays connected without a word.
    const capture = readFileSync(fixturePath('qs', 'fmt_v32s.qs'));
    const target = await connectTargetOnceListening(linkPort);
    target.on('error', () => {});
    await writeTo(target, capture);

    const firing = await until(
      'both rules fired',
      async () => {
        // The assertion's alert may have cleared already (its window is short): fired is enough here.
        const alerts = (await apiA.call('GET', '/alerts')).body.alerts as AlertBody[];
        return alerts.length === 2 && alerts;
      },
      20_000,
    );
    const byRule = new Map(firing.map((al) => [al.rule, al]));
    const assertAlert = byRule.get('asserts') as AlertBody;
    const silentAlert = byRule.get('silence') as AlertBody;
    expect(assertAlert).toMatchObject({ rig: 'rigW', link: 'uart0' });
    expect(silentAlert).toMatchObject({ rig: 'rigW', link: 'uart0', state: 'firing' });

    // The assertion alert names its record: stored, a QS_ASSERT_FAIL, at the alert's time.
    const session = assertAlert.session as string;
    // Storage may store it a moment after the live feed brought it.
    const stored = await until('the assertion record stored', async () => {
      const found = await apiA.call('GET', `/records?session=${session}&name=QS_ASSERT_FAIL`);
      return found.status === 200 && found.body.records[0];
    });
    expect(stored.seq).toBe(assertAlert.seq);
    expect(Date.parse(assertAlert.at)).toBe(Math.floor(Number(BigInt(stored.hostNs) / 1_000_000n)));
    expect(assertAlert.dashboardUrl).toBe(
      `http://dashboard.example/#/session/${session}?seq=${stored.seq}&after=${stored.seq - 1}`,
    );
    // Within 2 s of the cause: the record's arrival, and the link's silence reaching its limit.
    expect(Date.parse(assertAlert.firedAt) - Date.parse(assertAlert.at)).toBeLessThan(2000);
    expect(Date.parse(silentAlert.firedAt) - Date.parse(silentAlert.at)).toBeLessThan(2000);
    expect(silentAlert.session).toBe(session);
    // Either process's gauge says so, for Alertmanager (the silence fires until the target goes away).
    const gauge = await metricsText(b);
    expect(gauge).toContain('tracehub_alerts_firing{rule="link silent",rig="rigW",link="uart0",service="api"} 1');

    // The assertion clears when its window passes; the silence when the target goes away.
    await until('the assertion alert resolved', async () => {
      const alerts = (await apiB.call('GET', '/alerts?rule=asserts')).body.alerts as AlertBody[];
      return alerts[0]?.state === 'resolved';
    });
    target.destroy();
    await until('the silence alert resolved', async () => {
      const alerts = (await apiB.call('GET', '/alerts?rule=silence')).body.alerts as AlertBody[];
      return alerts[0]?.state === 'resolved';
    });

    // Four state changes, each delivered once: the first attempt answered 500, the retry 200.
    await until('every delivery retried and delivered', () => {
      const ok = receiver.posts.filter((p) => p.answered === 200);
      return ok.length >= 4;
    });
    const deliveries = new Map<string, Post[]>();
    for (const p of receiver.posts) deliveries.set(p.delivery, [...(deliveries.get(p.delivery) ?? []), p]);
    expect([...deliveries.keys()].sort()).toEqual(
      [
        `${assertAlert.id}-firing`,
        `${assertAlert.id}-resolved`,
        `${silentAlert.id}-firing`,
        `${silentAlert.id}-resolved`,
      ].sort(),
    );
    for (const [delivery, posts] of deliveries) {
      expect(
        posts.map((p) => p.answered),
        delivery,
      ).toEqual([500, 200]);
      expect(posts[0].body).toBe(posts[1].body);
      for (const p of posts) {
        expect(p.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(p.body).digest('hex')}`);
      }
      const notice = JSON.parse(posts[0].body);
      expect(notice.text).toMatch(notice.state === 'firing' ? /^\[FIRING\] / : /^\[RESOLVED\] /);
      expect(notice.text).toContain('rigW/uart0');
    }
    // The firing notices left within 2 s of their causes.
    const firstPost = (id: number) => (deliveries.get(`${id}-firing`) as Post[])[0].receivedMs;
    expect(firstPost(assertAlert.id) - Date.parse(assertAlert.at)).toBeLessThan(2000);
    expect(firstPost(silentAlert.id) - Date.parse(silentAlert.at)).toBeLessThan(2000);

    // Each rule fired once across both processes.
    const all = (await apiA.call('GET', '/alerts')).body.alerts as AlertBody[];
    expect(all.map((al) => al.rule).sort()).toEqual(['asserts', 'silence']);

    // The Prometheus gauge: nothing fires now.
    expect(await metricsText(b)).not.toMatch(/^tracehub_alerts_firing\{/m);

    // A backtest over the stored session lists what the live run raised.
    const from = new Date(Date.now() - 10 * 60_000).toISOString();
    const to = new Date(Date.now() + 1000).toISOString();
    for (const live of [assertAlert, silentAlert]) {
      const backtest = await apiB.call('POST', `/rules/${live.rule}/backtest?from=${from}&to=${to}`);
      expect(backtest.status, JSON.stringify(backtest.body)).toBe(200);
      expect(
        backtest.body.alerts.map((al: AlertBody) => ({
          rig: al.rig,
          link: al.link,
          session: al.session,
          seq: al.seq,
          at: al.at,
        })),
      ).toEqual([{ rig: live.rig, link: live.link, session: live.session, seq: live.seq, at: live.at }]);
      expect(backtest.body.alerts[0].resolvedAt).not.toBeNull();
    }
  }, 90_000);

  it('are kept from the command line too: added, listed, acknowledged, silenced, removed', async () => {
    const cliEnv = backendsEnv(env);
    expect(
      await cli(
        ['rules', 'add', '--id', 'cli-stp', '--name', 'stp errors', '--preset', 'stp-errors', '--protocols', 'stp'],
        cliEnv,
      ),
    ).toBe('cli-stp\n');
    // An API process takes up a rule added beside it.
    await until(
      'the new rule judged',
      async () => (await apis[1].call('GET', '/rules/cli-stp')).body.evaluatedBy !== null,
      10_000,
    );
    const listed = await cli(['rules', 'list', '--json'], cliEnv);
    expect(
      listed
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toContain('cli-stp');
    const fired = await fireAlert(backends.db, {
      ruleId: 'cli-stp',
      rig: 'rigS',
      link: 'stm0',
      summary: 'STP error markers',
      session: null,
      seq: null,
      causeAt: new Date(),
    });
    const alerts = (await cli(['alerts', 'list', '--rule', 'cli-stp', '--firing', '--json'], cliEnv))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(alerts).toMatchObject([
      { id: Number(fired?.id), rule: 'cli-stp', rig: 'rigS', link: 'stm0', state: 'firing' },
    ]);
    expect(await cli(['alerts', 'ack', String(alerts[0].id), '--by', 'night shift'], cliEnv)).toContain('acknowledged');
    expect((await apis[0].call('GET', '/alerts?rule=cli-stp')).body.alerts[0].acknowledgedBy).toBe('night shift');
    expect(await cli(['rules', 'silence', 'cli-stp', '--for', '600'], cliEnv)).toContain('silenced until');
    expect(await cli(['rules', 'remove', 'cli-stp'], cliEnv)).toBe('removed cli-stp\n');
    await expect(cli(['rules', 'add', '--name', 'x', '--condition', '{"kind":"silent"}'], cliEnv)).rejects.toThrow(
      /--condition/,
    );
  });
});
