// Services started while Postgres cannot be reached: Postgres "goes down" for this test only,
// behind a TCP proxy of the test's own that it cuts and opens again (the shared server stays
// up for the other test files).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import type { TraceRecord } from '@tracehub/contracts';
import {
  CuttableTcpProxy,
  fixturePath,
  freePort,
  natsUrl,
  repoRoot,
  uniquePrefix,
  until,
} from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../foundation/processes.js';
import { connectTarget, writeTo } from '../support/tcp-target.js';
import * as harness from './harness.js';

const RIG = 'rigPS';
const LINK = 'uart0';
const TOKEN = `pgstart-${randomBytes(8).toString('hex')}`;

let run: harness.PipelineTestRun;
let proxy: CuttableTcpProxy;
let prefix: string;
let work: string;

beforeAll(async () => {
  run = await harness.startPipelineTestRun('pgstart');
  proxy = new CuttableTcpProxy('127.0.0.1', Number(new URL(run.databaseUrl).port || 5432));
  await proxy.open();
  prefix = uniquePrefix('pgstart');
  work = mkdtempSync(join(tmpdir(), 'th-pgstart-'));
}, 60_000);

afterAll(async () => {
  await run?.close();
  await proxy?.cut();
  if (prefix) await harness.removeBusPrefix(natsUrl(), prefix);
  if (work) rmSync(work, { recursive: true, force: true });
});

async function readyz(port: number): Promise<{ status: number; body: { status: string; [k: string]: unknown } }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: await res.json() };
}

/** Reads the api's live tail of the link over SSE, collecting the records it sends. */
function liveTail(apiPort: number): { records: TraceRecord[]; close(): void } {
  const records: TraceRecord[] = [];
  const abort = new AbortController();
  void (async () => {
    const res = await fetch(`http://127.0.0.1:${apiPort}/api/v1/live/sse?rig=${RIG}&link=${LINK}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: abort.signal,
    });
    const decoder = new TextDecoder();
    let text = '';
    for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(piece, { stream: true });
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const event = text.slice(0, end);
        text = text.slice(end + 2);
        if (!event.startsWith('event: records')) continue;
        const data = event.split('\n').find((l) => l.startsWith('data: '));
        if (data) records.push(...(JSON.parse(data.slice(6)) as TraceRecord[]));
      }
    }
  })().catch(() => {});
  return { records, close: () => abort.abort() };
}

describe('services started while Postgres is away', () => {
  it('decode and serve the live tail before Postgres is back, and lose nothing when it returns', async () => {
    const viaProxy = new URL(run.databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.listenPort);
    const env: harness.PipelineEnv = { natsUrl: natsUrl(), databaseUrl: viaProxy.toString(), prefix };
    const targetPort = await freePort();
    const gateway = await harness.startService('gateway', env, {
      TRACEHUB_LINKS: `qs/${RIG}/${LINK}=tcp-listen:127.0.0.1:${targetPort}`,
      GATEWAY_CHUNK_BYTES: '4096',
    });
    run.services.push(gateway);
    const startApi = async (): Promise<RunningProcess & { port: number }> => {
      const port = await freePort();
      const api = await harness.startService('api', env, {
        API_PORT: String(port),
        API_HOST: '127.0.0.1',
        API_TOKENS: `${TOKEN}:read`,
      });
      run.services.push(api);
      return Object.assign(api, { port });
    };
    const startStorage = (healthPort: number): RunningProcess => {
      // Not awaited to be ready: while Postgres is away, storage waits to start.
      const storage = startNode(join(repoRoot, 'apps/storage/dist/main.js'), {
        ...harness.backendsEnv(env),
        HEALTH_PORT: String(healthPort),
      });
      run.services.push(storage);
      return storage;
    };
    let decoder = await harness.startService('decoder-qs', env);
    run.services.push(decoder);
    const storageHealth = await freePort();
    let storage = startStorage(storageHealth);
    await storage.waitForLine(/"msg":"ready/, 30_000);
    let api = await startApi();

    // Postgres up: a session begins and its first records are stored.
    const one = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const target = await connectTarget(targetPort);
    const sent: Buffer[] = [];
    const send = async (copies: number) => {
      for (let i = 0; i < copies; i++) {
        await writeTo(target, one);
        sent.push(one);
      }
    };
    await send(5);
    const [session] = await harness.waitForSessions(run.db, RIG, LINK, 150);
    expect(session).toBeDefined();
    await until('the first records stored', async () => {
      const row = await run.db
        .selectFrom('sessions')
        .select('record_count')
        .where('id', '=', session)
        .executeTakeFirst();
      return row !== undefined && Number(row.record_count) > 0;
    });

    // The decoder has checkpointed the session (the settings it decodes with are in the
    // checkpoint: a decoder started later needs no Postgres to go on with it).
    const bus = await harness.connectBus({ url: env.natsUrl, name: 'pgstart-test', prefix });
    try {
      const checkpoints = await new Kvm(bus.js).open(bus.names.decoderStateBucket);
      await until('the session checkpointed', async () => {
        const entry = await checkpoints.get(`qs.${RIG}.${LINK}`);
        return entry?.operation === 'PUT' && entry.json<{ session: string }>().session === session;
      });
    } finally {
      await bus.close();
    }

    // Postgres goes away; the decoder, the api and storage are killed and started again.
    await proxy.cut();
    for (const p of [decoder, api, storage]) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
    decoder = await harness.startService('decoder-qs', env);
    run.services.push(decoder);
    api = await startApi();
    storage = startStorage(storageHealth);

    // Each says what it lacks: storage waits to start, the decoder is not ready, and the api
    // is ready without Postgres, its queries answered 503 with Retry-After.
    expect(
      await until(
        'storage to name Postgres',
        async () => (await readyz(storageHealth).catch(() => undefined)) ?? false,
      ),
    ).toEqual({
      status: 503,
      body: { status: 'starting', failing: ['postgres'] },
    });
    expect(await readyz(harness.healthPortOf(decoder))).toEqual({
      status: 503,
      body: { status: 'not ready', failing: ['postgres'] },
    });
    expect(await readyz(api.port)).toEqual({ status: 200, body: { status: 'ready', degraded: ['postgres'] } });
    const query = await fetch(`http://127.0.0.1:${api.port}/api/v1/sessions`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(query.status).toBe(503);
    expect(query.headers.get('retry-after')).toBe('5');
    expect(query.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await query.json()).detail).toMatch(/database is unavailable/);

    // The live tail goes on: records decoded after the restart reach its clients.
    const tail = liveTail(api.port);
    try {
      await until(
        'the live tail to answer',
        async () => {
          await send(1);
          return tail.records.length > 0;
        },
        30_000,
        200,
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}\ndecoder:\n${decoder.stdout.slice(-20).join('\n')}\napi:\n${api.stdout.slice(-20).join('\n')}`,
        );
      });
      expect(tail.records.every((r) => r.session === session)).toBe(true);
      expect(storage.stdout.some((l) => /"msg":"ready/.test(l))).toBe(false);
    } finally {
      tail.close();
    }
    await send(3);

    // Postgres back: storage starts, every byte and every record is stored, once.
    await proxy.open();
    await storage.waitForLine(/"msg":"ready/, 30_000);
    await new Promise<void>((resolve) => target.end(() => resolve()));
    const all = Buffer.concat(sent);
    const link = await harness.storedLinkBytes(run.db, session, 60_000);
    expect(link.lost).toBe(0);
    expect(link.bytes.equals(all)).toBe(true);
    const stored = await harness.storedSession(run.db, session, 60_000);
    const file = join(work, 'sent.qs');
    writeFileSync(file, all);
    const expected = await harness.offlineDecode(file, 'qs');
    expect(stored.length).toBe(expected.length);
    expect(stored.map(harness.decoded)).toEqual(expected.map(harness.decoded));
    // The api answers its queries again, and is ready with nothing missing.
    await until(
      'the api to answer queries',
      async () => {
        const res = await fetch(`http://127.0.0.1:${api.port}/api/v1/sessions?rig=${RIG}`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        return res.status === 200;
      },
      20_000,
      200,
    );
    expect(
      await until(
        'the api to be ready with Postgres',
        async () => {
          const r = await readyz(api.port);
          return r.body.degraded === undefined && r;
        },
        20_000,
        200,
      ),
    ).toEqual({ status: 200, body: { status: 'ready' } });
    // The decoder takes Postgres up again at its next try (within the 5 s its waits grow to).
    await until(
      'the decoder to be ready',
      async () => (await readyz(harness.healthPortOf(decoder))).status === 200,
      20_000,
      200,
    );
  }, 180_000);
});
