/**
 * The api's memory with clients that never read: the api as its own process (built dist) on
 * real NATS, SLOW_SSE live-tail clients (200) and SLOW_PALM PalmTrace clients of its listening
 * port (200) that connect and never read a byte, while SLOW_RECORDS records (200 000) are
 * published live on the link's record subject; then every client goes away.
 *
 *   node --import tsx tests/bench/slow-clients.bench.ts   (needs `npm run build`, NATS_URL and DATABASE_URL)
 *
 * Prints the api's RSS before the clients, at its highest while they were connected, just after
 * they left (once the api counts no live client and no PalmTrace client) and SLOW_SETTLE_S (20)
 * seconds later, and the records the api still held for live readers at each point (its
 * `api_live_held_records` gauge); writes test-output/bench/slow-clients.json.
 */
import { connect, type Socket } from 'node:net';
import { connectBus } from '@tracehub/bus';
import type { TraceRecord } from '@tracehub/contracts';
import { publishLive } from '../support/publish-live.js';
import { transitionRecord } from '../support/transition-record.js';
import { benchRun, freePort, residentMb, start, writeFigures } from './bench-support.js';

const sseClients = Number(process.env.SLOW_SSE ?? 200);
const palmClients = Number(process.env.SLOW_PALM ?? 200);
const totalRecords = Number(process.env.SLOW_RECORDS ?? 200_000);
const settleSeconds = Number(process.env.SLOW_SETTLE_S ?? 20);
const TOKEN = 'bench-read-token-0123456789';
const BATCH = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Records like a busy QS link's: a line of text and a few fields each. */
function batchOf(first: number): TraceRecord[] {
  return Array.from({ length: BATCH }, (_, i) =>
    transitionRecord({ rig: 'rig1', link: 'uart0', session: 's-slow' }, first + i, {
      chunk: Math.floor((first + i) / BATCH),
      fields: { source: 'thinking', target: 'hungry', n: first + i },
      text: `${String(first + i).padStart(10, '0')} ===>Tran Obj=l_philo[2],Sig=TIMEOUT_SIG,State=Philo_thinking->Philo_hungry`,
      raw: Buffer.from([(first + i) & 0xff, 0x7e, 0x01, 0x02, 0x03, 0x04]).toString('base64'),
    }),
  );
}

/** A metric of the api's /metrics, by its full name (0 when absent). */
async function metric(port: number, name: string): Promise<number> {
  const text = await (
    await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  // `name value` or `name{labels} value`.
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The api's V8 heap (used, total) and external memory (buffers), MB, from its /metrics. */
async function heapMb(port: number): Promise<{ heapUsedMb: number; heapTotalMb: number; externalMb: number }> {
  const mb = async (name: string) => Math.round((await metric(port, name)) / 1048576);
  return {
    heapUsedMb: await mb('nodejs_heap_size_used_bytes'),
    heapTotalMb: await mb('nodejs_heap_size_total_bytes'),
    externalMb: await mb('nodejs_external_memory_bytes'),
  };
}

/** A socket that connects, sends `request` if given, and never reads (its receive window fills). */
function neverReading(port: number, request?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.pause();
      if (request) socket.write(request);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

const apiPort = await freePort();
const palmPort = await freePort();
await benchRun(
  'slowclients',
  async (env) => [
    start('api', {
      ...env,
      API_PORT: String(apiPort),
      API_HOST: '127.0.0.1',
      API_TOKENS: `${TOKEN}:read`,
      PALMTRACE_LISTEN_PORT: String(palmPort),
      DASHBOARD_DIR: '/nonexistent',
    }),
  ],
  async ({ place, services }) => {
    const rss = () => Math.round(residentMb(services).api);
    const bus = await connectBus({
      url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      name: 'slow-bench',
      prefix: place.prefix,
    });
    let next = 0;
    const publish = async (records: number) => {
      for (let n = 0; n < records; n += BATCH) {
        publishLive(bus, batchOf(next), next / BATCH);
        next += BATCH;
        // Flushed now and then: NATS paces the publisher, the api reads as fast as it can.
        if ((n / BATCH) % 50 === 49) await bus.nc.flush();
      }
      await bus.nc.flush();
    };
    const queued = async () =>
      (await metric(apiPort, 'tracehub_api_live_held_records')) +
      (await metric(apiPort, 'tracehub_palmtrace_listener_held_records'));

    // Before: the api warmed up with records and no client.
    await publish(20_000);
    await sleep(2000);
    const before = { rssMb: rss(), ...(await heapMb(apiPort)), queuedRecords: await queued() };
    process.stdout.write(`before: ${JSON.stringify(before)}\n`);

    const sockets: Socket[] = [];
    const get = `GET /api/v1/live/sse?access_token=${TOKEN} HTTP/1.1\r\nHost: x\r\n\r\n`;
    for (let i = 0; i < sseClients; i++) sockets.push(await neverReading(apiPort, get));
    for (let i = 0; i < palmClients; i++) sockets.push(await neverReading(palmPort));
    await until('the live clients', async () => (await metric(apiPort, 'tracehub_api_live_clients')) === sseClients);

    let peakDuring = 0;
    const sampler = setInterval(() => {
      peakDuring = Math.max(peakDuring, rss());
    }, 50);
    const started = Date.now();
    await publish(totalRecords);
    await sleep(2000);
    clearInterval(sampler);
    const during = {
      rssMb: rss(),
      ...(await heapMb(apiPort)),
      peakRssMb: peakDuring,
      queuedRecords: await queued(),
      publishSeconds: (Date.now() - started) / 1000,
    };
    process.stdout.write(`during: ${JSON.stringify(during)}\n`);

    for (const s of sockets) s.destroy();
    await until('no live client', async () => (await metric(apiPort, 'tracehub_api_live_clients')) === 0);
    await until(
      'no PalmTrace client',
      async () => (await metric(apiPort, 'tracehub_palmtrace_listener_clients')) === 0,
    );
    const leftAt = Date.now();
    const afterLeaving = { rssMb: rss(), ...(await heapMb(apiPort)), queuedRecords: await queued() };
    process.stdout.write(`after leaving: ${JSON.stringify(afterLeaving)}\n`);
    await sleep(5000);
    const fiveSecondsLater = { rssMb: rss(), ...(await heapMb(apiPort)), queuedRecords: await queued() };
    process.stdout.write(`5 s after leaving: ${JSON.stringify(fiveSecondsLater)}\n`);
    // Records keep coming with nobody reading: what the api holds must not grow again.
    await publish(20_000);
    await sleep(Math.max(0, settleSeconds * 1000 - (Date.now() - leftAt)));
    const settled = { rssMb: rss(), ...(await heapMb(apiPort)), queuedRecords: await queued(), seconds: settleSeconds };
    process.stdout.write(`${settleSeconds} s later: ${JSON.stringify(settled)}
`);
    await bus.close();
    writeFigures('slow-clients.json', services, {
      sse_clients: sseClients,
      palmtrace_clients: palmClients,
      records: totalRecords,
      before,
      during,
      after_leaving: afterLeaving,
      five_seconds_after_leaving: fiveSecondsLater,
      settled,
    });
  },
);
