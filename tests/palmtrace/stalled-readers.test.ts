import { type Socket, connect as tcpConnect } from 'node:net';
import { type Bus, connectBus } from '@tracehub/bus';
import type { TraceRecord } from '@tracehub/contracts';
import { type PalmTraceMessage, PalmTraceParser } from '@tracehub/palmtrace';
import { natsUrl, transitionRecord, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN, testPalmTraceSettings } from '../api/fixture-data.js';
import { publishLive } from '../support/publish-live.js';
import { type TestApi, testApi } from '../support/test-api.js';

// Issue 14 item 2: a thousand PalmTrace clients that never read must not stall the api, nor
// make NATS cut it off as a slow consumer, nor cost a client that reads a single record.
const STALLED = 1000;
// Each connection that never reads holds up to about 4 MB in the kernel (loopback send buffer)
// before its writes stop: a long stream to a thousand of them would put the whole machine's TCP
// under memory pressure. The stream is kept below that (about 150 kB a connection); the
// drop-and-tell path of a stalled connection is shown by the bridge test and the outlet's own.
const TOTAL = 4_000;
const PER_BATCH = 50;
const QUEUE = 10_000;

let api: TestApi;
let publisher: Bus;
const sockets: Socket[] = [];

beforeAll(async () => {
  api = await testApi('stalled', { settings: { palmTrace: testPalmTraceSettings({ queueRecords: QUEUE }) } });
  publisher = await connectBus({ url: natsUrl(), name: 'stalled-publisher', prefix: api.bus.names.prefix });
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await api?.close();
  await publisher?.close();
});

function record(seq: number): TraceRecord {
  return transitionRecord({ rig: 'rig9', link: 'uart0', session: 's-stalled' }, seq, {
    chunk: Math.floor(seq / PER_BATCH),
    text: `${seq} QS_QEP_TRAN Philo_inst[0] TIMEOUT_SIG`,
  });
}

async function listener() {
  const res = await api.app.inject({ url: '/api/v1/reporters', headers: { authorization: `Bearer ${READ_TOKEN}` } });
  return res.json().listener as {
    port: number;
    clients: Array<{ messagesSent: number; dropped: number; queued: number }>;
  };
}

async function connectClient(port: number): Promise<Socket> {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

describe('PalmTrace listening port with a thousand clients that never read', () => {
  it('keeps the api answering and the NATS connection up, and gives a reading client every record', async () => {
    const { port } = await listener();
    // Clients that never read: their socket is paused from the start, so the kernel windows fill.
    for (let i = 0; i < STALLED; i++) (await connectClient(port)).pause();
    const fast = await connectClient(port);
    const parser = new PalmTraceParser();
    const received: PalmTraceMessage[] = [];
    fast.on('data', (chunk) =>
      parser.push(chunk, (e) => {
        if (e.type === 'message') received.push(e.message);
      }),
    );
    await waitUntil(async () => (await listener()).clients.length === STALLED + 1, 30_000, 'every client to be seen');

    const disconnects: string[] = [];
    void (async () => {
      for await (const s of api.bus.nc.status())
        if (s.type === 'disconnect' || s.type === 'error') disconnects.push(s.type);
    })();

    /** Publishes records [from, to) in batches, flushing now and then as a decoder's acks would pace it. */
    const publishRange = async (from: number, to: number) => {
      for (let seq = from; seq < to; seq += PER_BATCH) {
        publishLive(
          publisher,
          Array.from({ length: PER_BATCH }, (_, i) => record(seq + i)),
          seq / PER_BATCH,
        );
        if ((seq / PER_BATCH) % 20 === 19) await publisher.nc.flush();
      }
      await publisher.nc.flush();
    };

    /** Asks for the fleet page again and again while `during` runs; the latencies, ms. */
    const rigsLatencies = async (during: Promise<unknown>) => {
      const latencies: number[] = [];
      let running = true;
      void during.finally(() => {
        running = false;
      });
      do {
        const t = performance.now();
        const res = await api.app.inject({ url: '/api/v1/rigs', headers: { authorization: `Bearer ${READ_TOKEN}` } });
        expect(res.statusCode, res.body).toBe(200);
        latencies.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      } while (running);
      await during;
      return latencies.sort((x, y) => x - y);
    };
    const summary = (l: number[]) =>
      `p50 ${l[Math.floor(l.length / 2)].toFixed(0)} ms, max ${l[l.length - 1].toFixed(0)} ms (${l.length} requests)`;

    const idle = await rigsLatencies(new Promise((r) => setTimeout(r, 2000)));
    // The first records fill every stalled connection's kernel buffers (a one-time cost per connection) ...
    await publishRange(0, TOTAL / 2);
    await waitUntil(async () => received.length >= TOTAL / 2, 300_000, 'the reading client to get the first half');
    // ... after which stalled clients cost nothing per record.
    const started = performance.now();
    const flowing = rigsLatencies(
      publishRange(TOTAL / 2, TOTAL).then(() =>
        waitUntil(async () => received.length >= TOTAL, 60_000, 'the reading client to get every record'),
      ),
    );
    const busy = await flowing;
    const flowMs = performance.now() - started;
    console.log(
      `${TOTAL / 2} records to ${STALLED} stalled clients and 1 reader in ${flowMs.toFixed(0)} ms; /rigs while idle ${summary(idle)}, while flowing ${summary(busy)}`,
    );

    // The reading client got every record, in order, and no dropped notice.
    expect(received.length).toBe(TOTAL);
    expect(received.every((m, i) => m.text?.startsWith(`${i} `))).toBe(true);
    // The api's NATS connection was never cut.
    expect(disconnects).toEqual([]);
    expect(api.bus.nc.isClosed()).toBe(false);
    // Every stalled client accounts for every record: written into its socket, waiting, or missed.
    const { clients } = await listener();
    expect(clients.length).toBe(STALLED + 1);
    for (const c of clients) expect(c.messagesSent + c.queued + c.dropped).toBe(TOTAL);
    // The fleet page keeps answering while records flow past a thousand stalled clients (before,
    // it took 3.6-7.3 s); the bounds leave room for a shared, busy machine.
    expect(busy[busy.length - 1]).toBeLessThan(3000);

    // A stalled client that reads again gets what was queued for it and is told the rest.
    const resumed = sockets[0];
    const resumedMessages: PalmTraceMessage[] = [];
    const resumedParser = new PalmTraceParser();
    resumed.on('data', (chunk) =>
      resumedParser.push(chunk, (e) => {
        if (e.type === 'message') resumedMessages.push(e.message);
      }),
    );
    resumed.resume();
    const isNotice = (m: PalmTraceMessage) => m.text?.startsWith('tracehub: ') === true;
    await waitUntil(
      async () =>
        resumedMessages
          .filter((m) => !isNotice(m))
          .at(-1)
          ?.text?.startsWith(`${TOTAL - 1} `) === true,
      30_000,
      'the resumed client to reach the last record',
    );
    const notices = resumedMessages.filter(isNotice);
    const missed = notices.reduce((n, m) => n + Number(/(\d+) records? dropped/.exec(m.text ?? '')?.[1]), 0);
    expect(notices.every((m) => m.text?.endsWith('(this client was slower than the stream)'))).toBe(true);
    expect(resumedMessages.length - notices.length + missed).toBe(TOTAL);
  }, 180_000);
});
