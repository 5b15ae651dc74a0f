import type { AddressInfo } from 'node:net';
import { type Socket, connect as tcpConnect } from 'node:net';
import type { TraceRecord } from '@tracehub/contracts';
import { transitionRecord, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishLive } from '../support/publish-live.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN, testPalmTraceSettings } from './fixture-data.js';

// Issue 38 item 7: live readers that never read fill what the api holds for them; when they go,
// the api lets all of it go (every outlet of the live tail, the PalmTrace port's queue) and
// collects the garbage they left. Counted in outlets and held records, not in RSS.
const SSE_CLIENTS = 20;
const PALM_CLIENTS = 20;
const PER_BATCH = 50;
const QUEUE = 500;

let api: TestApi;
const sockets: Socket[] = [];

beforeAll(async () => {
  api = await testApi('liverelease', {
    settings: { liveQueueRecords: QUEUE, palmTrace: testPalmTraceSettings({ queueRecords: QUEUE }) },
  });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await api?.close();
});

/** A metric of the api's /metrics by its full name. */
async function metric(name: string): Promise<number> {
  const res = await api.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${READ_TOKEN}` } });
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (!line) throw new Error(`no metric ${name}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** A connection that sends `request` (if any) and never reads a byte. */
async function neverReading(port: number, request?: string): Promise<Socket> {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  if (request) socket.write(request);
  return socket;
}

/** Publishes `batches` batches of records from `seq` on, then flushes; the next seq. */
async function publishFrom(seq: number, batches: number): Promise<number> {
  for (let i = 0; i < batches; i++, seq += PER_BATCH)
    publishLive(
      api.bus,
      Array.from({ length: PER_BATCH }, (_, j) => record(seq + j)),
      seq / PER_BATCH,
    );
  await api.bus.nc.flush();
  return seq;
}

function record(seq: number): TraceRecord {
  return transitionRecord({ rig: 'rig5', link: 'uart0', session: 's-release' }, seq, {
    chunk: Math.floor(seq / PER_BATCH),
    text: `${seq} QS_QEP_TRAN Philo_inst[0] TIMEOUT_SIG ${'x'.repeat(200)}`,
  });
}

describe('live readers that leave', () => {
  it('leave no outlet, no held record and no PalmTrace client behind, and are followed by a full collection', async () => {
    const apiPort = (api.app.server.address() as AddressInfo).port;
    const reporters = await api.app.inject({
      url: '/api/v1/reporters',
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    const palmPort = (reporters.json() as { listener: { port: number } | null }).listener?.port;
    expect(palmPort).toBeGreaterThan(0);
    const get = `GET /api/v1/live/sse?access_token=${READ_TOKEN} HTTP/1.1\r\nHost: x\r\n\r\n`;
    for (let i = 0; i < SSE_CLIENTS; i++) await neverReading(apiPort, get);
    for (let i = 0; i < PALM_CLIENTS; i++) await neverReading(palmPort as number);
    await waitUntil(
      async () =>
        (await metric('tracehub_api_live_clients')) === SSE_CLIENTS &&
        (await metric('tracehub_palmtrace_listener_clients')) === PALM_CLIENTS,
      30_000,
      'every reader to be connected',
    );

    // Records until every outlet is full: each client holds records it has not read.
    let seq = 0;
    await waitUntil(
      async () => {
        seq = await publishFrom(seq, 20);
        return (
          (await metric('tracehub_api_live_held_records')) >= SSE_CLIENTS * QUEUE * 0.9 &&
          (await metric('tracehub_palmtrace_listener_held_records')) >= QUEUE * 0.9
        );
      },
      60_000,
      'the outlets to fill',
    );
    const collectionsBefore = await metric('tracehub_api_full_collections_after_readers_left_total');

    for (const s of sockets.splice(0)) s.destroy();
    await waitUntil(
      async () =>
        (await metric('tracehub_api_live_clients')) === 0 &&
        (await metric('tracehub_palmtrace_listener_clients')) === 0,
      30_000,
      'every reader to be gone',
    );
    // Nothing is held for readers that are gone, and records that keep coming are not kept either.
    await publishFrom(seq, 20);
    expect(api.app.liveHub.outletCount).toBe(0);
    expect(await metric('tracehub_api_live_held_records')).toBe(0);
    expect(await metric('tracehub_palmtrace_listener_held_records')).toBe(0);
    // And the garbage they left is collected (the api looks every 2 s).
    await waitUntil(
      async () => (await metric('tracehub_api_full_collections_after_readers_left_total')) > collectionsBefore,
      10_000,
      'a full collection after the readers left',
    );
  }, 120_000);
});
