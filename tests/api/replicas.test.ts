// Two API processes on one database and one bus, as behind a load balancer: they answer the
// same, a PalmTrace Reporter endpoint added on either is served by exactly one of them (its
// lease holder), and when that process is SIGKILLed the other takes the endpoint over within
// a lease, going on with its counters; an endpoint removed on a process that does not serve it
// is stopped by the one that does.
import { randomBytes } from 'node:crypto';
import { PalmReporterStandIn } from '@tracehub/palmtrace';
import { freePort, natsUrl, transitionRecord, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, removeBusPrefix } from '../foundation/processes.js';
import { type PipelineEnv, requireBuild, startService, stopAll } from '../pipeline/harness.js';
import { publishLive } from '../support/publish-live.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';

const TOKEN = `replicas-${randomBytes(8).toString('hex')}`;
const LEASE_MS = 1500;

let backends: TestBackends;
let env: PipelineEnv;
const procs: RunningProcess[] = [];
const reporters: PalmReporterStandIn[] = [];

interface Api {
  proc: RunningProcess;
  port: number;
}

async function startApi(): Promise<Api> {
  const port = await freePort();
  const proc = await startService('api', env, {
    API_PORT: String(port),
    API_HOST: '127.0.0.1',
    API_TOKENS: `${TOKEN}:read+control`,
    PALMTRACE_LEASE_MS: String(LEASE_MS),
    LOG_LEVEL: 'info',
  });
  procs.push(proc);
  return { proc, port };
}

async function call(api: Api, method: string, path: string, body?: object) {
  const res = await fetch(`http://127.0.0.1:${api.port}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

interface Status {
  id: string;
  servedBy: string | null;
  connected: boolean;
  messagesSent: number;
  reconnects: number;
  config: object;
}

async function listed(api: Api): Promise<Status[]> {
  const res = await call(api, 'GET', '/reporters');
  expect(res.status).toBe(200);
  return res.body.reporters;
}

const REPLICAS_SESSION = { rig: 'rig7', link: 'uart0', session: 's-replicas' };
let seq = 0;
/** Publishes one live record batch of `rig7/uart0` with `count` records; returns their texts. */
function publish(count: number): string[] {
  const records = Array.from({ length: count }, () => transitionRecord(REPLICAS_SESSION, seq++));
  publishLive(backends.bus, records, records[0].chunk);
  return records.map((r) => r.text);
}

const texts = (reporter: PalmReporterStandIn, connection: number) =>
  reporter.connections[connection - 1]?.messages.map((m) => m.text) ?? [];

beforeAll(async () => {
  requireBuild();
  backends = await testBackends('replicas', { topology: true });
  env = { natsUrl: natsUrl(), databaseUrl: backends.fresh.url, prefix: backends.bus.names.prefix };
}, 60_000);

afterAll(async () => {
  await stopAll(procs);
  for (const r of reporters) await r.close();
  await backends?.close();
  if (env) await removeBusPrefix(env.natsUrl, env.prefix);
});

describe('two API processes behind one address', () => {
  it('serve each Reporter endpoint from exactly one of them, answer the same, and move an endpoint when its process dies', async () => {
    const [a, b] = [await startApi(), await startApi()];
    const lab1 = new PalmReporterStandIn();
    const lab2 = new PalmReporterStandIn();
    reporters.push(lab1, lab2);
    await lab1.listen();
    await lab2.listen();

    // Added on A and on B; each is served by the process it was added on.
    const added1 = await call(a, 'POST', '/reporters', {
      id: 'lab1',
      host: '127.0.0.1',
      port: lab1.port,
      filter: { links: ['uart0'] },
    });
    expect(added1.status, JSON.stringify(added1.body)).toBe(201);
    const added2 = await call(b, 'POST', '/reporters', { id: 'lab2', host: '127.0.0.1', port: lab2.port });
    expect(added2.status).toBe(201);
    const idA = added1.body.servedBy as string;
    const idB = added2.body.servedBy as string;
    expect(idA).toMatch(new RegExp(`:${a.proc.child.pid}:`));
    expect(idB).toMatch(new RegExp(`:${b.proc.child.pid}:`));
    // An id is one endpoint across processes.
    expect((await call(b, 'POST', '/reporters', { id: 'lab1', host: '127.0.0.1', port: 1 })).status).toBe(409);

    await until('both Reporters connected', () => lab1.openConnections === 1 && lab2.openConnections === 1);
    const before = publish(50);
    await until('the live records at lab1', () => texts(lab1, 1).length === 50);
    expect(texts(lab1, 1)).toEqual(before);

    // Both processes answer the same: the same endpoints, configurations and servers.
    const sameView = (s: Status) => ({ id: s.id, servedBy: s.servedBy, config: s.config, connected: s.connected });
    const viewA = await until('both processes to show both connected', async () => {
      const [fromA, fromB] = [await listed(a), await listed(b)];
      const view = fromA.map(sameView);
      return view.every((s) => s.connected) && JSON.stringify(view) === JSON.stringify(fromB.map(sameView)) && view;
    });
    expect(viewA.map((s) => [s.id, s.servedBy])).toEqual([
      ['lab1', idA],
      ['lab2', idB],
    ]);
    expect((await call(b, 'GET', '/reporters/lab1')).body).toMatchObject({ id: 'lab1', servedBy: idA });

    // A has written lab1's counters since (every fifth of a lease): B goes on from them.
    await until('A to have written what it sent', async () => {
      const s = (await call(b, 'GET', '/reporters/lab1')).body as Status;
      return s.messagesSent >= 50;
    });
    // A dies: B takes lab1 within a lease, and lab1 never has two connections.
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, lab1.openConnections);
    }, 10);
    const killedAt = Date.now();
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    await until('lab1 reconnected from B', () => lab1.connections.length === 2 && lab1.openConnections === 1);
    const movedMs = Date.now() - killedAt;
    const moved = await until('B to say it serves lab1', async () => {
      const s = (await call(b, 'GET', '/reporters/lab1')).body as Status;
      return s.servedBy === idB && s.connected && s;
    });
    // The counters go on from what A last wrote; the Reporter is told records may be missing.
    expect(moved.reconnects).toBe(1);
    expect(moved.messagesSent).toBeGreaterThanOrEqual(50);
    const after = publish(20);
    await until('the live records after the move', () => texts(lab1, 2).length === 21);
    expect(texts(lab1, 2)[0]).toMatch(/^tracehub: this stream moved to another tracehub API process/);
    expect(texts(lab1, 2).slice(1)).toEqual(after);
    // lab2 stayed where it was.
    expect(lab2.connections).toHaveLength(1);

    // A third process joins; lab1 is removed there though B serves it: B stops at its next tick.
    const c = await startApi();
    expect((await call(c, 'DELETE', '/reporters/lab1')).status).toBe(204);
    await until('B to close lab1', () => lab1.openConnections === 0);
    expect((await call(b, 'GET', '/reporters/lab1')).status).toBe(404);
    expect((await listed(c)).map((s) => s.id)).toEqual(['lab2']);
    clearInterval(watch);
    expect(most).toBe(1);
    expect(lab2.connections).toHaveLength(1);
    console.log(`Reporter endpoint moved to the surviving process ${movedMs} ms after its process was killed`);
  }, 90_000);
});
