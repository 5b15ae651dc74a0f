import { connect as tcpConnect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Bus, connectBus } from '@tracehub/bus';
import type { TraceRecord } from '@tracehub/contracts';
import { upsertLink } from '@tracehub/db';
import { PalmReporterStandIn, type PalmTraceMessage, PalmTraceParser } from '@tracehub/palmtrace';
import type { ReporterStatus } from '@tracehub/palmtrace-bridge';
import { natsUrl, qspyLines, T0, transitionRecord, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN, testPalmTraceSettings } from '../api/fixture-data.js';
import { publishLive } from '../support/publish-live.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi } from '../support/test-api.js';

let api: TestApi;
let publisher: Bus;
const reporters: PalmReporterStandIn[] = [];

beforeAll(async () => {
  api = await testApi('palmtrace', {
    settings: {
      bodyLimit: 65_536,
      palmTrace: testPalmTraceSettings({
        listenOptions: { filter: { links: ['uart0'] } },
        linkSettingsRefreshMs: 100,
        // The API runs in this test's own process, whose tests hold its event loop for seconds
        // (100 000 records pushed at once): with the 5 s default an endpoint's lease renewal
        // came late once and the endpoint moved, Reporter notice and all. Moving between
        // processes is what tests/api/replicas.test.ts tests; here an endpoint stays put.
        leaseMs: 60_000,
      }),
    },
  });
  publisher = await connectBus({ url: natsUrl(), name: 'palmtrace-publisher', prefix: api.bus.names.prefix });
});

afterAll(async () => {
  await api?.close();
  for (const r of reporters) await r.close();
  await publisher?.close();
});

async function standIn(): Promise<PalmReporterStandIn> {
  const reporter = new PalmReporterStandIn();
  reporters.push(reporter);
  await reporter.listen();
  return reporter;
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function addReporter(body: object): Promise<{ id: string }> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/api/v1/reporters',
    headers: auth(CONTROL_TOKEN),
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function status(id: string): Promise<ReporterStatus> {
  const res = await api.app.inject({ url: `/api/v1/reporters/${id}`, headers: auth(READ_TOKEN) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** `until` as the bridge's tests wait: every 20 ms, 10 s unless told. */
const untilSoon = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000) =>
  until(what, probe, timeoutMs, 20);

function record(link: string, seq: number, over: Partial<TraceRecord> = {}): TraceRecord {
  return transitionRecord({ rig: 'rig7', link, session: `s-${link}` }, seq, {
    targetTs: String(123_450_000 + seq * 10_000),
    qs: { obj: 'Philo_inst[0]', sig: 'TIMEOUT_SIG', prio: (seq % 5) + 1 },
    text: `${link} record ${seq}`,
    ...over,
  });
}

function publish(records: TraceRecord[]): void {
  publishLive(publisher, records, records[0].chunk);
}

/** The endpoint tables every live test's Reporter endpoint has. */
const MODULES = { qsGroups: { SM: 0x0200 }, names: { PHILO_STAT: 0x8001 } };

/**
 * A Reporter stand-in and an endpoint `id` feeding it the records of `rig7/<link>` (a link of
 * the test's own: each test sets up its own endpoint), once it is connected.
 */
async function liveEndpoint(id: string, link: string): Promise<{ reporter: PalmReporterStandIn; id: string }> {
  const reporter = await standIn();
  await addReporter({
    id,
    host: '127.0.0.1',
    port: reporter.port,
    filter: { links: [link] },
    modules: MODULES,
    queueRecords: 50,
  });
  await reporter.waitForConnections(1, 10_000);
  return { reporter, id };
}

describe('PalmTrace bridge, live', () => {
  it('manages endpoints with scopes and schema validation', async () => {
    const reporter = await standIn();
    const bad = await api.app.inject({
      method: 'POST',
      url: '/api/v1/reporters',
      headers: auth(CONTROL_TOKEN),
      payload: { host: '127.0.0.1', port: 70000 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
    const readOnly = await api.app.inject({
      method: 'POST',
      url: '/api/v1/reporters',
      headers: auth(READ_TOKEN),
      payload: { host: '127.0.0.1', port: reporter.port },
    });
    expect(readOnly.statusCode).toBe(403);
    const noReplayTarget = await api.app.inject({
      method: 'POST',
      url: '/api/v1/reporters',
      headers: auth(CONTROL_TOKEN),
      payload: { host: '127.0.0.1', port: reporter.port, replay: { pace: 'fast' } },
    });
    expect(noReplayTarget.statusCode).toBe(400);
    // Values that would reach SQL or a date parser of the replay: refused before anything starts.
    for (const replay of [
      { session: 'a\u0000b' },
      { from: '2026-01-01T23:59:60Z', to: '2026-01-02T00:00:00Z' },
      { from: '2026-01-01T00:00:00Z', to: '2026-01-01T24:00:00Z' },
    ]) {
      const refused = await api.app.inject({
        method: 'POST',
        url: '/api/v1/reporters',
        headers: auth(CONTROL_TOKEN),
        payload: { host: '127.0.0.1', port: reporter.port, replay },
      });
      expect(refused.statusCode, JSON.stringify(replay)).toBe(400);
      expect(refused.json().detail).toMatch(/replay/);
    }
    const { id } = await addReporter({
      id: 'lab1',
      host: '127.0.0.1',
      port: reporter.port,
      filter: { links: ['uart0'] },
      modules: MODULES,
      queueRecords: 50,
    });
    expect(id).toBe('lab1');
    const again = await api.app.inject({
      method: 'POST',
      url: '/api/v1/reporters',
      headers: auth(CONTROL_TOKEN),
      payload: { id: 'lab1', host: '127.0.0.1', port: reporter.port },
    });
    expect(again.statusCode).toBe(409);
    const list = await api.app.inject({ url: '/api/v1/reporters', headers: auth(READ_TOKEN) });
    expect(list.json().reporters.map((r: { id: string }) => r.id)).toContain('lab1');
    expect(
      (await api.app.inject({ method: 'DELETE', url: '/api/v1/reporters/nope', headers: auth(CONTROL_TOKEN) }))
        .statusCode,
    ).toBe(404);
    await reporter.waitForConnections(1, 3000);
  });

  it('sends every record of a matching link, in order, with its text, module and ids; nothing of other links', async () => {
    const { reporter, id } = await liveEndpoint('lab-send', 'send0');
    const matching: TraceRecord[] = [];
    for (let b = 0; b < 10; b++) {
      const mine = Array.from({ length: 4 }, (_, i) => record('send0', b * 4 + i));
      // A state-machine record (module from qsGroups), a user record (module from names), an empty one.
      mine[1] = { ...mine[1], type: 100, name: 'PHILO_STAT', qs: undefined, targetTs: null };
      if (b === 3) mine[2] = { ...mine[2], text: '' };
      if (b === 5) mine[3] = { ...mine[3], text: 'first line\nsecond line €' };
      matching.push(...mine);
      publish(mine);
      publish(Array.from({ length: 3 }, (_, i) => record('send1', b * 3 + i)));
    }
    const expectedLines = matching.flatMap((r) => (r.text === '' ? [] : r.text.split('\n')));
    // A last record of the link after all of them: when it has come, nothing else came before it.
    publish([record('send0', 0, { session: 's-send0-last', text: 'the last' })]);
    const all = await reporter.waitFor(expectedLines.length + 1, 10_000);
    expect(all.map((m) => m.text).at(-1)).toBe('the last');
    const messages = all.slice(0, -1);
    expect(reporter.problems).toEqual([]);
    expect(messages.map((m) => m.text)).toEqual(expectedLines);
    let at = 0;
    for (const r of matching) {
      for (const _line of r.text === '' ? [] : r.text.split('\n')) {
        const m = messages[at++];
        expect(m.kind).toBe(1);
        expect(m.lineBreak).toBe(true);
        expect(m.module).toBe(r.name === 'PHILO_STAT' ? 0x8001 : 0x0200);
        expect(m.processId).toBe(7);
        expect(m.threadId).toBe(r.qs?.prio ?? null);
        expect(m.timestamp).toBe(r.targetTs === null ? null : Math.floor(Number(r.targetTs) / 10_000));
      }
    }
    const s = await status(id);
    expect(s).toMatchObject({ connected: true, messagesSent: expectedLines.length + 1, dropped: 0, reconnects: 0 });
  });

  it('reconnects after the Reporter restarts; counters show what was sent and dropped', async () => {
    const { reporter, id } = await liveEndpoint('lab-restart', 'restart0');
    const before = await status(id);
    await reporter.close();
    await untilSoon('the endpoint to see the Reporter gone', async () => !(await status(id)).connected);
    // 80 records while the Reporter is away (a session of their own: the feed checks each
    // session's seqs): the queue of 50 keeps the newest 50.
    const away = Array.from({ length: 80 }, (_, i) => record('restart0', 1000 + i, { session: 's-away' }));
    for (let i = 0; i < away.length; i += 10) publish(away.slice(i, i + 10));
    await untilSoon('the records to be queued', async () => {
      const s = await status(id);
      return s.queued + s.dropped - before.dropped === 80;
    });
    reporter.clear();
    const restartedAt = Date.now();
    await reporter.listen();
    // How soon is the reconnect backoff's business (its own tests); here, that it happens.
    await reporter.waitForConnections(1, 10_000);
    const reconnectMs = Date.now() - restartedAt;
    const messages = await reporter.waitFor(51, 10_000);
    expect(messages[0].text).toBe('tracehub: 30 records dropped (the Reporter was not connected)');
    expect(messages.slice(1).map((m) => m.text)).toEqual(away.slice(30).map((r) => r.text));
    const after = await status(id);
    expect(after).toMatchObject({
      connected: true,
      reconnects: 1,
      dropped: before.dropped + 30,
      messagesSent: before.messagesSent + 51,
      queued: 0,
    });
    const metrics = await api.app.inject({ url: '/metrics', headers: auth(READ_TOKEN) });
    expect(metrics.body).toContain('tracehub_palmtrace_dropped_records_total{reporter="lab-restart",service="api"} 30');
    expect(metrics.body).toContain('tracehub_palmtrace_reconnects_total{reporter="lab-restart",service="api"} 1');
    console.log(`reconnected ${reconnectMs} ms after the Reporter came back`);
  });

  it('streams the same to clients of the listening port', async () => {
    const list = await api.app.inject({ url: '/api/v1/reporters', headers: auth(READ_TOKEN) });
    const port = list.json().listener.port as number;
    const parser = new PalmTraceParser();
    const received: PalmTraceMessage[] = [];
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.on('data', (chunk) =>
      parser.push(chunk, (e) => {
        if (e.type === 'message') received.push(e.message);
      }),
    );
    await new Promise((resolve) => socket.once('connect', resolve));
    await untilSoon('the listener to see its client', async () => {
      const l = await api.app.inject({ url: '/api/v1/reporters', headers: auth(READ_TOKEN) });
      return l.json().listener.clients.length === 1;
    });
    publish([record('uart1', 5000, { session: 's-listened-uart1' })]);
    publish([record('uart0', 5000, { session: 's-listened' }), record('uart0', 5001, { session: 's-listened' })]);
    await untilSoon('two messages on the listening port', () => received.length >= 2);
    expect(received.map((m) => m.text)).toEqual(['uart0 record 5000', 'uart0 record 5001']);
    socket.destroy();
  });

  it("gives a link's records the Process ID and module its settings name", async () => {
    const { reporter } = await liveEndpoint('lab-ids', 'ids0');
    const linkId = await upsertLink(api.db, { rig: 'rig7', name: 'ids0', protocol: 'qs' });
    const put = await api.app.inject({
      method: 'PUT',
      url: `/api/v1/links/${linkId}/settings`,
      headers: auth(CONTROL_TOKEN),
      payload: { settings: { palmProcessId: 4242, palmModule: 0x0601 }, by: 'bridge test' },
    });
    expect(put.statusCode, put.body).toBe(200);
    const before = reporter.messages.length;
    // Not a state-machine record nor PHILO_STAT: the endpoint's tables do not name it.
    const tick = (seq: number) =>
      record('ids0', seq, { session: 's-palm-ids', type: 48, name: 'QS_QF_TICK', text: `tick ${seq}` });
    let seq = 0;
    // The bridge reads the links' settings again within its refresh (100 ms here).
    await untilSoon('a message with the Process ID of the link', async () => {
      publish([tick(seq++)]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return reporter.messages.slice(before).some((m) => m.message.processId === 4242);
    });
    const last = reporter.messages.at(-1)!.message;
    expect([last.processId, last.module, last.text]).toEqual([4242, 0x0601, `tick ${seq - 1}`]);
    // The endpoint's own table still wins for the records it names.
    const count = reporter.messages.length + 1;
    publish([record('ids0', seq, { session: 's-palm-ids', text: 'a transition' })]);
    const named = (await reporter.waitFor(count))[count - 1];
    expect([named.processId, named.module]).toEqual([4242, 0x0200]);
  });

  it('removes an endpoint and closes its connection', async () => {
    const { reporter, id } = await liveEndpoint('lab-remove', 'remove0');
    const res = await api.app.inject({
      method: 'DELETE',
      url: `/api/v1/reporters/${id}`,
      headers: auth(CONTROL_TOKEN),
    });
    expect(res.statusCode).toBe(204);
    await untilSoon('the Reporter to see the close', () => reporter.openConnections === 0);
    expect((await api.app.inject({ url: `/api/v1/reporters/${id}`, headers: auth(READ_TOKEN) })).statusCode).toBe(404);
  });
});

describe('PalmTrace bridge, a Reporter that never reads', () => {
  it('keeps memory bounded while 100 000 records flow', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const reporter = new PalmReporterStandIn();
    reporters.push(reporter);
    reporter.pauseReading();
    await reporter.listen();
    const { id } = await addReporter({
      id: 'stalled',
      host: '127.0.0.1',
      port: reporter.port,
      filter: { links: ['flood0'] },
    });
    await reporter.waitForConnections(1, 3000);
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const rssBefore = process.memoryUsage().rss;
    const TOTAL = 100_000;
    const PER_BATCH = 500;
    const padding = 'p'.repeat(400);
    const started = performance.now();
    let peakHeap = heapBefore;
    for (let b = 0; b < TOTAL / PER_BATCH; b++) {
      publish(
        Array.from({ length: PER_BATCH }, (_, i) =>
          record('flood0', b * PER_BATCH + i, { text: `flood0 ${b * PER_BATCH + i} ${padding}` }),
        ),
      );
      // Keep the publisher's own buffers small; the bridge's side is what is measured.
      if (b % 10 === 9) {
        await publisher.nc.flush();
        peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
      }
    }
    const counted = await untilSoon(
      'every record to be sent, queued or dropped',
      async () => {
        const s = await status(id);
        // messagesSent also counts the few dropped notices: close enough to know the flood is through.
        return s.messagesSent + s.dropped + s.queued >= TOTAL ? s : undefined;
      },
      25_000,
    );
    const flowMs = performance.now() - started;
    gc();
    const heapAfter = process.memoryUsage().heapUsed;
    const rssAfter = process.memoryUsage().rss;
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    console.log(
      `100k records (${mb(TOTAL * 420)} MB of text) to a stalled Reporter in ${flowMs.toFixed(0)} ms: heap ${mb(heapBefore)} -> ${mb(heapAfter)} MB (peak seen ${mb(peakHeap)}), rss ${mb(rssBefore)} -> ${mb(rssAfter)} MB; sent ${counted.messagesSent}, queued ${counted.queued}, dropped ${counted.dropped}`,
    );
    expect(counted.dropped).toBeGreaterThan(50_000);
    expect(counted.queued).toBeLessThanOrEqual(10_000);
    // The queue holds at most 10 000 records or 8 MiB; 42 MB of text went through.
    expect(heapAfter - heapBefore).toBeLessThan(24 * 1024 * 1024);
    expect(rssAfter - rssBefore).toBeLessThan(160 * 1024 * 1024);

    // The Reporter reads again: every record it gets plus the dropped notices account for all 100 000.
    reporter.resumeReading();
    const isNotice = (m: { message: PalmTraceMessage }) => m.message.text?.startsWith('tracehub: ') === true;
    const final = await untilSoon(
      'the Reporter to receive every record that was not dropped',
      async () => {
        const s = await status(id);
        const records = reporter.messages.filter((m) => !isNotice(m)).length;
        return s.queued === 0 && records + s.dropped === TOTAL ? s : undefined;
      },
      20_000,
    );
    const notices = reporter.messages.filter(isNotice);
    const droppedInNotices = notices.reduce(
      (n, m) => n + Number(/(\d+) records? dropped/.exec(m.message.text ?? '')?.[1]),
      0,
    );
    expect(droppedInNotices).toBe(final.dropped);
    expect(reporter.messages.length).toBe(final.messagesSent);
    const seqs = reporter.messages.filter((m) => !isNotice(m)).map((m) => Number(m.message.text?.split(' ')[1]));
    expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1])).toBe(true);
    expect(seqs[seqs.length - 1]).toBe(TOTAL - 1);
    expect(reporter.problems).toEqual([]);
    await api.app.inject({ method: 'DELETE', url: `/api/v1/reporters/${id}`, headers: auth(CONTROL_TOKEN) });
  }, 60_000);
});

describe('PalmTrace bridge, replay', () => {
  /**
   * Stores dpp_qv at `place` and adds an endpoint with `endpoint` (its filter and replay) for a
   * new stand-in Reporter, which must get the lines qspy printed for dpp_qv.
   */
  async function replayDpp(place: Parameters<typeof storeQsFixture>[2], endpoint: object) {
    await storeQsFixture(api.db, 'dpp_qv', place);
    const reporter = await standIn();
    const { id } = await addReporter({ host: '127.0.0.1', port: reporter.port, ...endpoint });
    return { reporter, id, expected: qspyLines('dpp_qv') };
  }

  it("delivers exactly a stored session's qspy lines", async () => {
    const { reporter, id, expected } = await replayDpp(
      { rig: 'rig3', link: 'uart0', session: 's-dpp', startNs: T0, stepNs: 1_000_000n },
      { replay: { session: 's-dpp', pace: 'fast' } },
    );
    const messages = await reporter.waitFor(expected.length, 10_000);
    const done = await untilSoon('the replay to finish', async () => {
      const s = await status(id);
      return s.replay?.state === 'done' ? s : undefined;
    });
    // Everything it sent has come, and it sent no more than the session's lines.
    await untilSoon('every message sent to arrive', () => reporter.messages.length === done.messagesSent);
    expect(reporter.messages.length).toBe(expected.length);
    expect(messages.map((m) => m.text)).toEqual(expected);
    expect(messages.every((m) => m.processId === 3 && m.lineBreak)).toBe(true);
    expect(reporter.problems).toEqual([]);
  });

  it('replays a host-time range at the original pace', async () => {
    // 42 chunks 20 ms apart: the session spans about 0.8 s of host time.
    const { reporter, expected } = await replayDpp(
      { rig: 'rig4', link: 'uart2', session: 's-paced', startNs: 1_764_100_000_000_000_000n, stepNs: 20_000_000n },
      {
        filter: { rigs: ['rig4'] },
        replay: {
          from: new Date(1_764_100_000_000).toISOString(),
          to: new Date(1_764_100_010_000).toISOString(),
          pace: 'original',
        },
      },
    );
    await reporter.waitForConnections(1, 10_000);
    const messages = await reporter.waitFor(expected.length, 10_000);
    expect(messages.map((m) => m.text)).toEqual(expected);
    const received = reporter.messages.map((m) => m.receivedAt);
    const spanMs = received[received.length - 1] - received[0];
    console.log(`original-pace replay: ${expected.length} lines over ${spanMs} ms`);
    // Paced: not sent at once (how close to the original pace is a bench's question).
    expect(spanMs).toBeGreaterThan(600);
  });
});
