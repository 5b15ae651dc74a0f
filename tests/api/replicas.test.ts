// Two API processes on one database and one bus, as behind a load balancer: they answer the
// same, a PalmTrace Reporter endpoint added on either is served by exactly one of them (its
// lease holder), and when that process is SIGKILLed the other takes the endpoint over within
// a lease, going on with its counters; an endpoint removed on a process that does not serve it
// is stopped by the one that does.
import { randomBytes } from 'node:crypto';
import { type Bus, connectBus, ensureTopology } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import { createDb, type Database, migrateToLatest } from '@tracehub/db';
import { PalmReporterStandIn } from '@tracehub/palmtrace';
import { type FreshDatabase, freePort, freshDatabase, natsUrl, uniquePrefix, until } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, removeBusPrefix, startNode } from '../foundation/processes.js';
import { requireBuild } from '../pipeline/harness.js';

const TOKEN = `replicas-${randomBytes(8).toString('hex')}`;
const LEASE_MS = 1500;

let fresh: FreshDatabase;
let db: Kysely<Database>;
let bus: Bus;
const prefix = uniquePrefix('rpl');
const procs: RunningProcess[] = [];
const reporters: PalmReporterStandIn[] = [];

interface Api {
  proc: RunningProcess;
  port: number;
}

async function startApi(): Promise<Api> {
  const port = await freePort();
  const proc = startNode('apps/api/dist/main.js', {
    NATS_URL: natsUrl(),
    DATABASE_URL: fresh.url,
    TRACEHUB_BUS_PREFIX: prefix,
    HEALTH_PORT: '0',
    API_PORT: String(port),
    API_HOST: '127.0.0.1',
    API_TOKENS: `${TOKEN}:read+control`,
    PALMTRACE_LEASE_MS: String(LEASE_MS),
    LOG_LEVEL: 'info',
  });
  procs.push(proc);
  await proc.waitForLine(/"msg":"ready/, 45_000);
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

let seq = 0;
/** Publishes one live record batch of `rig7/uart0` with `count` records; returns their texts. */
function publish(count: number): string[] {
  const records: TraceRecord[] = [];
  for (let i = 0; i < count; i++, seq++) {
    records.push({
      rig: 'rig7',
      link: 'uart0',
      session: 's-replicas',
      seq,
      chunk: seq,
      protocol: 'qs',
      hostNs: (1_764_000_000_000_000_000n + BigInt(seq) * 1000n).toString(),
      targetTs: String(seq * 10_000),
      kind: 'record',
      type: 6,
      name: 'QS_QEP_TRAN',
      qs: { obj: 'Philo_inst[0]', sig: 'TIMEOUT_SIG', prio: 1 },
      fields: {},
      text: `record ${seq}`,
      raw: '',
    });
  }
  const batch: RecordBatch = {
    protocol: 'qs',
    rig: 'rig7',
    link: 'uart0',
    session: 's-replicas',
    chunk: records[0].chunk,
    hostNs: records[0].hostNs,
    eos: false,
    records,
  };
  bus.nc.publish(bus.names.recSubject('qs', 'rig7', 'uart0'), JSON.stringify(batch));
  return records.map((r) => r.text);
}

const texts = (reporter: PalmReporterStandIn, connection: number) =>
  reporter.connections[connection - 1]?.messages.map((m) => m.text) ?? [];

beforeAll(async () => {
  requireBuild();
  fresh = await freshDatabase('replicas');
  db = createDb(fresh.url);
  await migrateToLatest(db);
  bus = await connectBus({ url: natsUrl(), name: 'replicas-test', prefix });
  await ensureTopology(bus);
}, 60_000);

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
  for (const r of reporters) await r.close();
  await bus?.close();
  await db?.destroy();
  await fresh?.drop();
  await removeBusPrefix(natsUrl(), prefix);
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
    expect(movedMs).toBeLessThan(LEASE_MS + 3000);
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
