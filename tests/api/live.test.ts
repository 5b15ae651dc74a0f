import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ensureTopology, publishRecordBatch, removeTopology } from '@tracehub/bus';
import type { TraceRecord } from '@tracehub/contracts';
import { recordBatchOf, T0, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { publishLive } from '../support/publish-live.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;
let base: string;

const QUEUE = 1000;
const BATCHES = 400;
const PER_BATCH = 20;
const TOTAL = BATCHES * PER_BATCH;
const padding = 'x'.repeat(2000);

beforeAll(async () => {
  api = await testApi('live', { settings: { liveQueueRecords: QUEUE } });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
});

afterAll(() => api?.close());

function record(seq: number): TraceRecord {
  return {
    rig: 'rig5',
    link: 'uart0',
    session: 'live-1',
    seq,
    chunk: Math.floor(seq / PER_BATCH),
    protocol: 'qs',
    hostNs: (T0 + BigInt(seq)).toString(),
    targetTs: String(seq),
    kind: seq % 10 === 9 ? 'error' : 'record',
    type: 6,
    name: seq % 10 === 9 ? 'QS_BAD_CHKSUM' : 'QS_QEP_TRAN',
    qs: { obj: 'Philo_inst[0]', sig: 'TIMEOUT_SIG' },
    fields: {},
    text: `${seq} ${padding}`,
    raw: '',
  };
}

/** Publishes every batch on core NATS as the decoders' JetStream publishes are seen, paced by round trips. */
async function publishAll(): Promise<void> {
  for (let b = 0; b < BATCHES; b++) {
    const records = Array.from({ length: PER_BATCH }, (_, i) => record(b * PER_BATCH + i));
    publishLive(api.bus, records, b);
    await api.bus.nc.flush();
  }
}

interface Received {
  seqs: number[];
  missed: number;
}

/** An SSE reader over a raw HTTP response; `pause` keeps it from reading until resumed. */
function sseClient(query: string): {
  received: Received & { reasons: string[] };
  res: Promise<http.IncomingMessage>;
  done: (n: number) => Promise<void>;
} {
  const received = { seqs: [] as number[], missed: 0, reasons: [] as string[] };
  let buffer = '';
  const waiters: Array<() => void> = [];
  const res = new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(
      `http://${base}/api/v1/live/sse?${query}`,
      { headers: { authorization: `Bearer ${READ_TOKEN}` } },
      (r) => {
        r.setEncoding('utf8');
        r.on('data', (text: string) => {
          buffer += text;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event === 'records' && data)
              for (const r of JSON.parse(data) as TraceRecord[]) received.seqs.push(r.seq);
            if (event === 'missed' && data) {
              const notice = JSON.parse(data);
              received.missed += notice.missed;
              received.reasons.push(notice.reason);
            }
            end = buffer.indexOf('\n\n');
          }
          for (const w of waiters) w();
        });
        resolve(r);
      },
    );
    req.on('error', reject);
  });
  const done = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`SSE client has ${received.seqs.length}+${received.missed} of ${n}`)),
        30_000,
      );
      const check = () => {
        if (received.seqs.length + received.missed >= n) {
          clearTimeout(timer);
          resolve();
        }
      };
      waiters.push(check);
      check();
    });
  return { received, res, done };
}

async function waitForClients(n: number): Promise<void> {
  for (let i = 0; i < 300 && api.app.liveHub.clientCount !== n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(api.app.liveHub.clientCount).toBe(n);
}

const increasing = (seqs: number[]) => seqs.every((s, i) => i === 0 || s > seqs[i - 1]);

describe('live tail', () => {
  it('delivers records in order over SSE and WebSocket, and tells a stalled client what it missed', async () => {
    const fast = sseClient('rig=rig5');
    const slow = sseClient('link=uart0');
    const slowRes = await slow.res;
    await fast.res;
    slowRes.pause();

    const ws = new WebSocket(`ws://${base}/api/v1/live/ws?kind=error&access_token=${READ_TOKEN}`);
    const wsReceived: Received = { seqs: [], missed: 0 };
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      if (msg.type === 'records') for (const r of msg.records) wsReceived.seqs.push(r.seq);
      if (msg.type === 'missed') wsReceived.missed += msg.missed;
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    await waitForClients(3);

    const started = performance.now();
    await publishAll();
    // The stalled client never slowed the others down.
    await fast.done(TOTAL);
    const ms = performance.now() - started;
    expect(fast.received.missed).toBe(0);
    expect(fast.received.seqs).toEqual(Array.from({ length: TOTAL }, (_, i) => i));

    const errors = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 10 === 9);
    for (let i = 0; i < 500 && wsReceived.seqs.length < errors.length; i++) await new Promise((r) => setTimeout(r, 10));
    expect(wsReceived).toEqual({ seqs: errors, missed: 0 });

    // The stalled client resumes: it gets what was queued for it, and the count of what was dropped.
    slowRes.resume();
    await slow.done(TOTAL);
    expect(slow.received.missed).toBeGreaterThan(0);
    expect(slow.received.seqs.length + slow.received.missed).toBe(TOTAL);
    expect(increasing(slow.received.seqs)).toBe(true);
    expect(slow.received.seqs[slow.received.seqs.length - 1]).toBe(TOTAL - 1);
    console.log(
      `live: ${TOTAL} records (${((TOTAL * padding.length) / 1e6).toFixed(0)} MB) to the fast client in ${ms.toFixed(0)} ms; stalled client missed ${slow.received.missed}`,
    );

    ws.close();
    slowRes.destroy();
    (await fast.res).destroy();
    await waitForClients(0);
  });

  it('sends a record sent again by a decoder once, and tells of records that never reached the server', async () => {
    const client = sseClient('session=live-2');
    await client.res;
    await waitForClients(1);
    const send = (from: number, to: number) => {
      const records = Array.from({ length: to - from }, (_, i) => ({ ...record(from + i), session: 'live-2' }));
      publishLive(api.bus, records, from);
    };
    send(0, 10);
    send(5, 15); // a decoder that took the link over sent 5-14 again
    send(20, 30); // 15-19 were lost between NATS and the server
    await client.done(30);
    expect(client.received.seqs).toEqual([
      ...Array.from({ length: 15 }, (_, i) => i),
      ...Array.from({ length: 10 }, (_, i) => 20 + i),
    ]);
    expect(client.received.missed).toBe(5);
    expect(client.received.reasons).toEqual([expect.stringMatching(/did not reach this server live/)]);
    (await client.res).destroy();
    await waitForClients(0);
  });

  it('refuses a live request with a bad filter or without a token', async () => {
    const bad = await api.app.inject({
      method: 'GET',
      url: '/api/v1/live/sse?kind=nonsense',
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/kind/);
    const anonymous = await api.app.inject({ method: 'GET', url: '/api/v1/live/sse' });
    expect(anonymous.statusCode).toBe(401);
  });

  it("counts each link's records for the fleet page from message headers, receiving no records while nobody watches", async () => {
    await ensureTopology(api.bus);
    await waitForClients(0);
    const parsedBefore = api.app.liveHub.batches;
    let chunk = 0;
    const publish = (link: string, records: number, errors: number) => {
      const batch = recordBatchOf(
        Array.from({ length: records }, (_, i) => ({
          ...record(chunk * 1000 + i),
          rig: 'rig6',
          link,
          session: `rates-${link}`,
          chunk,
          kind: i < errors ? ('error' as const) : ('record' as const),
        })),
        chunk,
      );
      chunk++;
      return publishRecordBatch(api.bus, batch);
    };
    const rate = (link: string) => api.app.liveHub.linkRates().find((r) => r.rig === 'rig6' && r.link === link);
    // The api reads the stream from the moment its consumer exists: publish on a probe link
    // until it counts (the probe's records stay out of the link measured below).
    await waitUntil(async () => {
      await publish('probe', 1, 0);
      return rate('probe') !== undefined;
    }, 15_000);
    await publish('uart1', 40, 3);
    await publish('uart1', 60, 2);
    // 100 records in the 10 s window: 10 records/s.
    await waitUntil(async () => Math.round((rate('uart1')?.recordsPerSecond ?? 0) * 10) === 100);
    expect(rate('uart1')!.recentErrors).toBe(5);
    expect(api.app.liveHub.batches).toBe(parsedBefore);
    await removeTopology(api.bus);
  });
});
