// The api's replies held to the shared contract (@tracehub/api-contract), which the dashboard
// and the command line are typed from: the real api, built with its app factory on Postgres,
// NATS and a gateway serving a scripted QS target, answers every route that has a JSON reply
// schema, and each reply is checked with TypeBox against the contract's schema for it. A reply
// that drifts from its schema fails, and so does a route with a JSON reply that is not called
// here (its reply would go unchecked).

import { readFileSync } from 'node:fs';
import { type TSchema, Type } from '@sinclair/typebox';
import { type App, buildApp } from '@tracehub/api';
import {
  AlertSchema,
  AlertsReply,
  BacktestReply,
  CommandReply,
  CompareReply,
  ControlState,
  DictionariesReply,
  HistoryReply,
  LinkConnection,
  LinkSettingsPutReply,
  LinkSettingsReply,
  LinkSummary,
  LinksReply,
  MarkerReply,
  problemResponses,
  RatesReply,
  RecordsPage,
  RedecodeResult,
  ReporterStatusSchema,
  ReportersReply,
  Rig,
  RigsReply,
  RuleSchema,
  RulesReply,
  replyProblems,
  SequenceReply,
  SeriesReply,
  Session,
  SessionChannels,
  SessionLosses,
  SessionStateMachines,
  SessionsPage,
  SessionTargetTime,
  TargetRecordsPage,
  TargetTimelineReply,
  Timeline,
} from '@tracehub/api-contract';
import { ProblemSchema } from '@tracehub/contracts';
import { fireAlert, insertLinkChunks, type LinkChunk } from '@tracehub/db';
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixturePath } from '../support/paths.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type ControlBackends, controlBackends } from '../support/scripted-qs-link.js';
import { storeStpFixture } from '../support/stp-fixture-session.js';
import { CONTROL_TOKEN, testApiSettings } from './fixture-data.js';

let backends: ControlBackends;
let app: App;
let linkId: number;
let session: string;

/** The routes called, as the OpenAPI document names them (`GET /api/v1/sessions/{id}`). */
const called = new Set<string>();

/** A QS session with its link bytes stored, as storage stores them: one that can be decoded again. */
async function storeRedecodable(): Promise<string> {
  const place = { rig: 'rig4', link: 'uart2', session: 's-contract-bytes', startNs: T0 + 10_000_000_000n };
  const chunkBytes = 256;
  await storeQsFixture(backends.db, 'defer', { ...place, chunkBytes });
  const bytes = new Uint8Array(readFileSync(fixturePath('qs', 'defer.qs')));
  const chunks: LinkChunk[] = [];
  for (let off = 0, n = 0; off < bytes.length; off += chunkBytes, n++)
    chunks.push({
      chunk: n,
      recvNs: place.startNs + BigInt(n) * 1_000_000n,
      lost: 0,
      eos: false,
      data: bytes.subarray(off, off + chunkBytes),
    });
  chunks.push({
    chunk: chunks.length,
    recvNs: place.startNs + BigInt(chunks.length) * 1_000_000n,
    lost: 0,
    eos: true,
    data: new Uint8Array(0),
  });
  await insertLinkChunks(backends.db, [{ session: place.session, chunks }]);
  return place.session;
}

beforeAll(async () => {
  backends = await controlBackends('contract', 'rig4', 'uart1');
  linkId = backends.stored.linkId;
  session = backends.stored.session;
  await storeStpFixture(backends.db, 'v2_gerr', { rig: 'rig4', link: 'stm0', session: 's-contract-stp', startNs: T0 });
  app = await buildApp({ db: backends.db, bus: backends.bus, settings: testApiSettings({ controlTimeoutMs: 2000 }) });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await backends?.close();
});

/**
 * Calls the api (with the control token, which may also read) and expects `status` and a
 * reply that `schema` admits; returns the reply. `route` is the route as OpenAPI names it.
 */
async function expectReply(
  route: string,
  schema: TSchema,
  request: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: object },
  status = 200,
) {
  const method = request.method ?? 'GET';
  called.add(`${method} /api/v1${route}`);
  const res = await app.inject({
    method,
    url: `/api/v1${request.url}`,
    headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    ...(request.payload ? { payload: request.payload } : {}),
  });
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(replyProblems(schema, body), `${method} ${request.url}`).toEqual([]);
  return body;
}

/** The tests below that call routes, and how many of them have run. */
const TESTS_CALLING_ROUTES = 7;
let testsRun = 0;

describe('every reply of the api fits the shared contract', () => {
  beforeEach(() => {
    testsRun++;
  });

  it('the fleet', async () => {
    const rigs = await expectReply('/rigs', RigsReply, { url: '/rigs' });
    expect(rigs.rigs.length).toBeGreaterThan(0);
    await expectReply('/rigs/{rig}', Rig, { url: '/rigs/rig4' });
    await expectReply('/links', LinksReply, { url: '/links' });
    await expectReply('/links/{id}', LinkSummary, { url: `/links/${linkId}` });
    await expectReply('/history', HistoryReply, { url: '/history' });
    const from = new Date(Number(T0 / 1_000_000n) - 60_000).toISOString();
    const to = new Date(Number(T0 / 1_000_000n) + 3_600_000).toISOString();
    const rates = await expectReply('/rates', RatesReply, { url: `/rates?from=${from}&to=${to}&buckets=10` });
    expect(rates.links.length).toBeGreaterThan(0);
  });

  it('sessions and their views', async () => {
    const page = await expectReply('/sessions', SessionsPage, { url: '/sessions?limit=5' });
    expect(page.sessions.length).toBeGreaterThan(0);
    await expectReply('/sessions/{id}', Session, { url: `/sessions/${session}` });
    await expectReply('/sessions/{id}/dictionaries', DictionariesReply, { url: `/sessions/${session}/dictionaries` });
    const sequence = await expectReply('/sessions/{id}/sequence', SequenceReply, {
      url: `/sessions/${session}/sequence?limit=200`,
    });
    expect(sequence.steps.length).toBeGreaterThan(0);
    await expectReply('/sessions/{id}/state-machines', SessionStateMachines, {
      url: `/sessions/${session}/state-machines`,
    });
    await expectReply('/sessions/{id}/channels', SessionChannels, { url: '/sessions/s-contract-stp/channels' });
    await expectReply('/sessions/{id}/losses', SessionLosses, { url: `/sessions/${session}/losses` });
    const targetTime = await expectReply('/sessions/{id}/target-time', SessionTargetTime, {
      url: `/sessions/${session}/target-time`,
    });
    expect(targetTime.segments.length).toBeGreaterThan(0);
    const targetRecords = await expectReply('/sessions/{id}/target-records', TargetRecordsPage, {
      url: `/sessions/${session}/target-records?limit=20`,
    });
    expect(targetRecords.records).toHaveLength(20);
    const targetTimeline = await expectReply('/sessions/{id}/target-timeline', TargetTimelineReply, {
      url: `/sessions/${session}/target-timeline?buckets=10`,
    });
    expect(targetTimeline.lanes.length).toBeGreaterThan(0);
    const targetDetail = await expectReply('/sessions/{id}/target-timeline', TargetTimelineReply, {
      url: `/sessions/${session}/target-timeline?from=${targetTimeline.fromTicks}&to=${BigInt(targetTimeline.fromTicks!) + 1000n}`,
    });
    expect(targetDetail.items).not.toBeNull();
    await expectReply('/sessions/{id}/series', SeriesReply, {
      url: `/sessions/${session}/series?series=QS_QF_TIMEEVT_ARM:ctr&columns=10`,
    });
    const timeline = await expectReply('/timeline', Timeline, { url: `/timeline?session=${session}` });
    expect(timeline.lanes).toHaveLength(1);
    const detail = await expectReply('/timeline', Timeline, { url: `/timeline?session=${session}&detail=20000` });
    expect(detail.lanes[0].items.length).toBeGreaterThan(0);
    const records = await expectReply('/records', RecordsPage, { url: `/records?session=${session}&limit=50` });
    expect(records.records).toHaveLength(50);
    const compared = await expectReply('/compare', CompareReply, { url: `/compare?a=${session}&b=${session}` });
    expect(compared.divergence).toBeNull();
  });

  it('problems, the answer of every route that refuses', async () => {
    await expectReply('/sessions/{id}', ProblemSchema, { url: '/sessions/no-such-session' }, 404);
    await expectReply('/records', ProblemSchema, { url: '/records?limit=0' }, 400);
  });

  it('a session decoded again', async () => {
    const id = await storeRedecodable();
    const result = await expectReply('/sessions/{id}/redecode', RedecodeResult, {
      method: 'POST',
      url: `/sessions/${id}/redecode`,
    });
    expect(result.records).toBeGreaterThan(0);
  });

  it('link settings, connection and control, through the gateway', async () => {
    await expectReply('/links/{id}/settings', LinkSettingsReply, { url: `/links/${linkId}/settings` });
    await expectReply('/links/{id}/settings', LinkSettingsPutReply, {
      method: 'PUT',
      url: `/links/${linkId}/settings`,
      payload: { settings: { objPtrSize: 4 } },
    });
    await expectReply('/links/{id}/connection', LinkConnection, { url: `/links/${linkId}/connection` });
    const state = await expectReply('/links/{id}/control', ControlState, { url: `/links/${linkId}/control` });
    expect(state.frontEnd).not.toBeNull();
    await expectReply('/links/{id}/frontend/release', ControlState, {
      method: 'POST',
      url: `/links/${linkId}/frontend/release`,
    });
    const reply = await expectReply('/links/{id}/commands', CommandReply, {
      method: 'POST',
      url: `/links/${linkId}/commands`,
      payload: { command: { command: 'aoFilter', object: 'l_philo' }, replyWindowMs: 50 },
    });
    expect(reply.outcome).toBe('ack');
    // A user marker on the live QS link (a note record); a time base and an upload are for STP links.
    const marker = await expectReply('/links/{id}/markers', MarkerReply, {
      method: 'POST',
      url: `/links/${linkId}/markers`,
      payload: { comment: 'contract' },
    });
    expect(marker.marker).toEqual({ kind: 'user', comment: 'contract' });
    for (const [route, payload] of [
      ['time-base', { offsetNs: '1000' }],
      ['upload', { data: 'AAEC' }],
    ] as const)
      await expectReply(
        `/links/{id}/${route}`,
        problemResponses[400],
        { method: 'POST', url: `/links/${linkId}/${route}`, payload },
        409,
      );
  });

  it('PalmTrace Reporter endpoints', async () => {
    await expectReply(
      '/reporters',
      ReporterStatusSchema,
      { method: 'POST', url: '/reporters', payload: { id: 'contract', host: '127.0.0.1', port: 9 } },
      201,
    );
    const list = await expectReply('/reporters', ReportersReply, { url: '/reporters' });
    expect(list.reporters).toHaveLength(1);
    await expectReply('/reporters/{id}', ReporterStatusSchema, { url: '/reporters/contract' });
  });

  it('watch rules and alerts', async () => {
    const rule = { name: 'transitions', condition: { kind: 'records', filter: { names: ['QS_QEP_TRAN'] } } };
    await expectReply('/rules', RuleSchema, { method: 'POST', url: '/rules', payload: { id: 'tran', ...rule } }, 201);
    await expectReply('/rules/{id}', RuleSchema, { method: 'PUT', url: '/rules/tran', payload: rule });
    await expectReply('/rules', RulesReply, { url: '/rules' });
    await expectReply('/rules/{id}', RuleSchema, { url: '/rules/tran' });
    const presets = await expectReply(
      '/rules/presets',
      Type.Object({ presets: Type.Record(Type.String(), Type.Unknown()) }),
      {
        url: '/rules/presets',
      },
    );
    expect(Object.keys(presets.presets)).toEqual(['qs-assert', 'stp-errors']);
    await expectReply('/rules/{id}/silence', RuleSchema, {
      method: 'POST',
      url: '/rules/tran/silence',
      payload: { seconds: 60 },
    });
    const from = new Date(Number(T0 / 1_000_000n) - 60_000).toISOString();
    const to = new Date(Number(T0 / 1_000_000n) + 3_600_000).toISOString();
    const backtest = await expectReply('/rules/{id}/backtest', BacktestReply, {
      method: 'POST',
      url: `/rules/tran/backtest?from=${from}&to=${to}`,
    });
    expect(backtest.alerts.length).toBeGreaterThan(0);
    const unsaved = await expectReply('/rules/backtest', BacktestReply, {
      method: 'POST',
      url: `/rules/backtest?from=${from}&to=${to}`,
      payload: rule,
    });
    expect(unsaved.alerts).toEqual(backtest.alerts);
    const fired = await fireAlert(backends.db, {
      ruleId: 'tran',
      rig: 'rig4',
      link: 'uart1',
      summary: 'transitions',
      session,
      seq: 1,
      causeAt: new Date(),
    });
    await expectReply('/alerts', AlertsReply, { url: '/alerts?state=firing' });
    await expectReply('/alerts/{id}/acknowledge', AlertSchema, {
      method: 'POST',
      url: `/alerts/${fired?.id}/acknowledge`,
      payload: { by: 'night shift' },
    });
  });

  // Once every test above has run (not in a run filtered to some of them), no route with a
  // JSON reply went unchecked: a file-level check, so that no test needs another before it.
  afterAll(async () => {
    if (testsRun < TESTS_CALLING_ROUTES) return;
    // The OpenAPI document the api serves, made from the routes' schemas.
    const document = (await app.inject({ url: '/docs/json' })).json() as {
      paths: Record<
        string,
        Record<string, { responses?: Record<string, { content?: Record<string, { schema?: { type?: string } }> }> }>
      >;
    };
    const withJsonReply: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, operation] of Object.entries(methods)) {
        const answers = Object.entries(operation.responses ?? {}).filter(([code]) => code.startsWith('2'));
        // A streamed export may be JSON too (perfetto), but its schema is a string: no reply to check.
        const json = answers.map(([, r]) => r.content?.['application/json']?.schema);
        if (json.some((schema) => schema !== undefined && schema.type !== 'string'))
          withJsonReply.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(withJsonReply.length).toBeGreaterThan(10);
    expect(withJsonReply.filter((route) => !called.has(route)).sort()).toEqual([]);
  });
});
