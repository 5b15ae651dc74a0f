import dgram from 'node:dgram';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { type Bus, connectBus, ensureTopology, readRawChunkMeta, removeTopology, requestControl } from '@tracehub/bus';
import type { RawChunkMeta } from '@tracehub/contracts';
import { freePort, natsUrl, PrivateNats, seededRandom, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLinkSource,
  Gateway,
  type GatewayOptions,
  LinkAddressError,
  StdinSource,
  TcpListenSource,
  type UdpSource,
} from '../src/index.js';

let bus: Bus;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'gateway-test', prefix: uniquePrefix('gw') });
  await ensureTopology(bus);
});

afterAll(async () => {
  await removeTopology(bus);
  await bus.close();
});

/** Every raw chunk of a link, in stream order. */
async function chunksOf(b: Bus, rig: string, link: string): Promise<Array<RawChunkMeta & { data: Buffer }>> {
  const out = [];
  const info = await b.jsm.streams.info(b.names.rawStream);
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await b.jsm.streams.getMessage(b.names.rawStream, { seq }).catch(() => null);
    if (
      !msg ||
      (msg.subject !== b.names.rawSubject('qs', rig, link) && msg.subject !== b.names.rawSubject('stp', rig, link))
    )
      continue;
    out.push({ ...readRawChunkMeta(msg.header), data: Buffer.from(msg.data) });
  }
  return out;
}

function connectTarget(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

const write = (s: net.Socket, data: Uint8Array) => new Promise<void>((r) => s.write(data, () => r()));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('link addresses', () => {
  it('name every kind of link, and say what is wrong with a bad one', () => {
    expect(createLinkSource('tcp-listen:127.0.0.1:0').description).toBe('tcp-listen 127.0.0.1:0');
    expect(createLinkSource('tcp-listen:').description).toBe('tcp-listen 0.0.0.0:6601');
    expect(createLinkSource('tcp-connect:box.lab:4000').description).toBe('tcp-connect box.lab:4000');
    expect(createLinkSource('udp::5000').description).toBe('udp 0.0.0.0:5000');
    expect(createLinkSource('serial:/dev/ttyUSB0?baud=921600').description).toBe('serial /dev/ttyUSB0 921600 8N1');
    expect(createLinkSource('file:/tmp/x.qs?pace=original').description).toBe('file /tmp/x.qs');
    expect(createLinkSource('-').description).toBe('stdin');
    expect(() => createLinkSource('pigeon:1')).toThrow(LinkAddressError);
    expect(() => createLinkSource('tcp-connect:host')).toThrow(/port must be/);
    expect(() => createLinkSource('file:/x?pace=slow')).toThrow(/pace must be/);
  });
});

/** A started gateway of QS link `r1/<link>` on tcp-listen, with a target connected to it. */
async function qsGatewayWithTarget(link: string, options: Partial<GatewayOptions>) {
  const source = new TcpListenSource('127.0.0.1', 0);
  const gateway = new Gateway({ bus, link: { protocol: 'qs', rig: 'r1', link }, source, ...options });
  await gateway.start();
  return { gateway, target: await connectTarget(source.boundPort) };
}

/** Writes `count` pieces of `size` bytes (piece i filled with i), waiting `pauseAfter(i)` ms after each. */
async function writePieces(target: net.Socket, count: number, size: number, pauseAfter: (i: number) => number) {
  const sent: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const piece = Buffer.alloc(size, i);
    sent.push(piece);
    await write(target, piece);
    const pause = pauseAfter(i);
    if (pause > 0) await sleep(pause);
  }
  return sent;
}

describe('gateway on tcp-listen', () => {
  it('publishes every byte of a connection as one session of ordered chunks, then its end', async () => {
    const { gateway, target } = await qsGatewayWithTarget('tcp', { chunkBytes: 1000, flushMs: 5 });
    const sent = await writePieces(target, 20, 337, (i) => (i % 5 === 0 ? 10 : 0));
    target.end();
    await sleep(100);
    await gateway.publisher.idle();
    await gateway.stop();
    const chunks = await chunksOf(bus, 'r1', 'tcp');
    const session = chunks[0].session;
    expect(chunks.every((c) => c.session === session)).toBe(true);
    expect(chunks.map((c) => c.chunk)).toEqual(chunks.map((_, i) => i));
    expect(chunks.at(-1)!.eos).toBe(true);
    expect(chunks.at(-1)!.data.length).toBe(0);
    expect(Buffer.concat(chunks.map((c) => c.data))).toEqual(Buffer.concat(sent));
    expect(chunks.every((c) => c.lost === 0)).toBe(true);
    const recv = chunks.map((c) => c.recvNs);
    expect([...recv].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(recv);
  });

  it('starts a new session at every connection and answers control requests by writing to the target', async () => {
    const source = new TcpListenSource('127.0.0.1', 0);
    const gateway = new Gateway({ bus, link: { protocol: 'qs', rig: 'r1', link: 'ctl' }, source, flushMs: 5 });
    await gateway.start();
    const first = await connectTarget(source.boundPort);
    await write(first, Buffer.from('one'));
    first.end();
    await sleep(100);
    const second = await connectTarget(source.boundPort);
    const received: Buffer[] = [];
    second.on('data', (d) => received.push(d));
    await write(second, Buffer.from('two'));
    await sleep(50);
    const reply = await bus.nc.request(
      bus.names.ctlSubject('r1', 'ctl'),
      JSON.stringify({ bytes: Buffer.from([0x7e, 1, 2]).toString('base64') }),
      { timeout: 2000 },
    );
    expect(reply.json()).toMatchObject({ ok: true, written: 3, session: gateway.publisher.currentSession });
    await sleep(50);
    expect(Buffer.concat(received)).toEqual(Buffer.from([0x7e, 1, 2]));
    const bad = await bus.nc.request(bus.names.ctlSubject('r1', 'ctl'), 'nonsense', { timeout: 2000 });
    expect(bad.json()).toMatchObject({ ok: false, error: expect.stringMatching(/not JSON/) });
    second.end();
    await sleep(100);
    await gateway.stop();
    const chunks = await chunksOf(bus, 'r1', 'ctl');
    const sessions = [...new Set(chunks.map((c) => c.session))];
    expect(sessions).toHaveLength(2);
    expect(gateway.publisher.sessions).toEqual(sessions);
    for (const s of sessions) expect(chunks.filter((c) => c.session === s && c.eos)).toHaveLength(1);
  });

  it('begins a session with its first byte: connections that send nothing leave nothing behind', async () => {
    const source = new TcpListenSource('127.0.0.1', 0);
    const gateway = new Gateway({ bus, link: { protocol: 'stp', rig: 'r1', link: 'flood' }, source, flushMs: 5 });
    await gateway.start();
    for (let i = 0; i < 20; i++) {
      const silent = await connectTarget(source.boundPort);
      await new Promise<void>((r) => silent.end(() => r()));
      await waitUntil(async () => gateway.connection().target === null, 5000, 'the connection to close');
    }
    const talking = await connectTarget(source.boundPort);
    await write(talking, Buffer.from([1, 2, 3]));
    await new Promise<void>((r) => talking.end(() => r()));
    await waitUntil(async () => (await chunksOf(bus, 'r1', 'flood')).some((c) => c.eos), 5000, 'the end chunk');
    await gateway.stop();
    const chunks = await chunksOf(bus, 'r1', 'flood');
    expect(new Set(chunks.map((c) => c.session)).size).toBe(1);
    expect(gateway.publisher.sessions).toEqual([chunks[0].session]);
    expect(Buffer.concat(chunks.map((c) => c.data))).toEqual(Buffer.from([1, 2, 3]));
  });

  it('holds no QS decoder state for a silent target, and one made later knows the target is connected', async () => {
    const source = new TcpListenSource('127.0.0.1', 0);
    const link = { protocol: 'qs' as const, rig: 'r1', link: 'silent' };
    const gateway = new Gateway({ bus, link, source, flushMs: 5 });
    await gateway.start();
    const target = await connectTarget(source.boundPort);
    await waitUntil(async () => gateway.connection().target !== null, 5000, 'the target to connect');
    // A connected target that sends nothing costs its socket, not a decoder (docs/scaling.md).
    expect('qsPointMade' in gateway && Reflect.get(gateway, 'qsPointMade') === undefined).toBe(true);
    const reply = await requestControl(bus, link, { status: true }, 5000);
    expect(reply.ok).toBe(true);
    expect(reply.status).toMatchObject({ targetConnected: true, frontEnd: null });
    target.destroy();
    await waitUntil(
      async () => (await requestControl(bus, link, { status: true }, 5000)).status?.targetConnected === false,
      5000,
      'the QS point to see the target go',
    );
    await gateway.stop();
  });

  it('says who is connected and since when, through a new session on the same connection, and nobody after', async () => {
    const source = new TcpListenSource('127.0.0.1', 0, { secondTarget: 'refuse' });
    const gateway = new Gateway({ bus, link: { protocol: 'stp', rig: 'r1', link: 'who' }, source, flushMs: 5 });
    await gateway.start();
    expect(gateway.connection()).toEqual({
      source: {
        kind: 'tcp-listen',
        description: `tcp-listen 127.0.0.1:${source.boundPort}`,
        secondTarget: 'refuse',
        idleTimeoutMs: 30_000,
      },
      target: null,
      notTaken: { refused: 0, replaced: 0, idleClosed: 0 },
    });
    const before = Date.now();
    const target = await connectTarget(source.boundPort);
    await write(target, Buffer.from([1]));
    await sleep(50);
    const connected = gateway.connection().target;
    expect(connected?.address).toBe(`127.0.0.1:${target.localPort}`);
    expect(connected?.sinceMs).toBeGreaterThanOrEqual(before);
    // New settings start a new session; the target is still the one connected since then.
    expect(gateway.publisher.startNewSession('settings changed')).toBeDefined();
    expect(gateway.connection().target).toEqual(connected);
    target.end();
    await sleep(100);
    expect(gateway.connection().target).toBeNull();
    await gateway.stop();
  });

  it('marks STP pauses inside a chunk with how long the link was idle, and cuts no chunk for them', async () => {
    const source = new TcpListenSource('127.0.0.1', 0);
    const markNs = 20_000_000n;
    const gateway = new Gateway({
      bus,
      link: { protocol: 'stp', rig: 'r1', link: 'stp' },
      source,
      flushMs: 2000,
      networkPauseMarkNs: markNs,
    });
    await gateway.start();
    const target = await connectTarget(source.boundPort);
    await write(target, Buffer.from([1, 2, 3]));
    await waitUntil(async () => gateway.publisher.stats.bytesIn === 3, 10_000, 'the first bytes read');
    // The target's pause: the one wait here that is the thing tested, not a wait for a result.
    await sleep(Number(markNs / 1_000_000n) + 5);
    await write(target, Buffer.from([4, 5]));
    target.end();
    await waitUntil(async () => (await chunksOf(bus, 'r1', 'stp')).some((c) => c.eos), 10_000, 'the end chunk');
    await gateway.stop();
    const chunks = (await chunksOf(bus, 'r1', 'stp')).filter((c) => !c.eos);
    expect(chunks.map((c) => [...c.data])).toEqual([[1, 2, 3, 4, 5]]);
    const [first, second] = chunks[0].segments!;
    expect(chunks[0].segments).toHaveLength(2);
    expect(first.offset).toBe(0);
    expect(first.pauseNs).toBe(chunks[0].pauseNs);
    expect(second.offset).toBe(3);
    expect(second.pauseNs).toBeGreaterThanOrEqual(markNs);
    expect(second.recvNs - first.recvNs).toBeGreaterThanOrEqual(markNs);
    expect(second.recvNs).toBe(chunks[0].recvNs);
  });

  it('takes no gap shorter than the pause mark of a network-fed STP link for a pause: delivery jitter', async () => {
    const source = new TcpListenSource('127.0.0.1', 0);
    const gateway = new Gateway({
      bus,
      link: { protocol: 'stp', rig: 'r1', link: 'jitter' },
      source,
      chunkBytes: 256,
      flushMs: 1,
      minChunkBytes: 0,
    });
    await gateway.start();
    const target = await connectTarget(source.boundPort);
    // 100 pieces, each after a gap of 0 to 4 ms (well under the 50 ms mark), cut into many chunks.
    const random = seededRandom(7);
    const sent: Buffer[] = [];
    for (let i = 0; i < 100; i++) {
      const piece = Buffer.alloc(1 + Math.floor(random() * 40), i);
      sent.push(piece);
      await write(target, piece);
      await sleep(Math.floor(random() * 5));
    }
    target.end();
    await waitUntil(async () => (await chunksOf(bus, 'r1', 'jitter')).some((c) => c.eos), 10_000, 'the end chunk');
    await gateway.stop();
    const chunks = (await chunksOf(bus, 'r1', 'jitter')).filter((c) => !c.eos);
    expect(Buffer.concat(chunks.map((c) => c.data))).toEqual(Buffer.concat(sent));
    expect(chunks.length).toBeGreaterThan(3);
    // The session's first byte follows the link's idle time before it; after it, no pause at all.
    for (const chunk of chunks.slice(1)) {
      expect(chunk.pauseNs, `chunk ${chunk.chunk}`).toBe(0n);
      for (const segment of chunk.segments ?? []) expect(segment.pauseNs).toBe(0n);
    }
  });
});

describe('gateway on tcp-connect and udp', () => {
  it('connects to a trace box that starts listening later, and reconnects after it closes: a session a connection', async () => {
    const port = await freePort();
    const gateway = new Gateway({
      bus,
      link: { protocol: 'qs', rig: 'r1', link: 'box' },
      source: createLinkSource(`tcp-connect:127.0.0.1:${port}`),
      flushMs: 5,
    });
    // Nothing listens yet: the source tries again with its backoff.
    await gateway.start();
    const connections: net.Socket[] = [];
    const box = net.createServer((socket) => {
      connections.push(socket);
      // Each connection sends its own bytes and is closed by the box.
      socket.end(Buffer.alloc(100, connections.length));
    });
    await new Promise<void>((resolve) => box.listen(port, '127.0.0.1', () => resolve()));
    try {
      await waitUntil(
        async () => (await chunksOf(bus, 'r1', 'box')).filter((c) => c.eos).length >= 2,
        15_000,
        'two sessions ended',
      );
    } finally {
      await gateway.stop();
      await new Promise<void>((resolve) => box.close(() => resolve()));
    }
    const chunks = await chunksOf(bus, 'r1', 'box');
    const sessions = [...new Set(chunks.map((c) => c.session))];
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    for (const [i, session] of sessions.slice(0, 2).entries()) {
      const own = chunks.filter((c) => c.session === session);
      expect(Buffer.concat(own.map((c) => c.data))).toEqual(Buffer.alloc(100, i + 1));
      expect(own.at(-1)!.eos).toBe(true);
    }
  });

  it('takes datagrams as one session from the first, and writes control bytes back to their sender', async () => {
    const source = createLinkSource('udp:127.0.0.1:0') as UdpSource;
    const gateway = new Gateway({ bus, link: { protocol: 'qs', rig: 'r1', link: 'udp' }, source, flushMs: 5 });
    await gateway.start();
    const target = dgram.createSocket('udp4');
    const replies: Buffer[] = [];
    target.on('message', (m) => replies.push(m));
    await new Promise<void>((resolve) => target.bind(0, '127.0.0.1', () => resolve()));
    try {
      const sent = [Buffer.alloc(300, 1), Buffer.alloc(200, 2), Buffer.alloc(100, 3)];
      for (const d of sent) await new Promise<void>((r) => target.send(d, source.boundPort, '127.0.0.1', () => r()));
      await waitUntil(async () => gateway.publisher.stats.bytesIn === 600, 10_000, 'the datagrams read');
      await source.write(Uint8Array.of(0x7e, 1, 2));
      await waitUntil(async () => replies.length === 1, 10_000, 'the reply datagram');
      expect([...replies[0]]).toEqual([0x7e, 1, 2]);
      await gateway.publisher.idle();
      await waitUntil(
        async () => (await chunksOf(bus, 'r1', 'udp')).reduce((n, c) => n + c.data.length, 0) === 600,
        10_000,
        'the chunks published',
      );
      const chunks = await chunksOf(bus, 'r1', 'udp');
      expect(new Set(chunks.map((c) => c.session)).size).toBe(1);
      expect(Buffer.concat(chunks.map((c) => c.data))).toEqual(Buffer.concat(sent));
    } finally {
      target.close();
      await gateway.stop();
    }
  });
});

describe('gateway on stdin', () => {
  it('publishes standard input as one session ending at end of input; an STP capture there has no pauses', async () => {
    const input = new PassThrough();
    const source = new StdinSource(input);
    const gateway = new Gateway({ bus, link: { protocol: 'stp', rig: 'r1', link: 'stdin' }, source, flushMs: 5 });
    await gateway.start();
    const sent = [Buffer.alloc(700, 1), Buffer.alloc(900, 2), Buffer.alloc(50, 3)];
    for (const piece of sent) {
      input.write(piece);
      // The reads come apart in time; for a capture that is not a pause of a line.
      await waitUntil(async () => input.readableLength === 0, 5000, 'the piece read');
    }
    input.end();
    await source.finished;
    await gateway.publisher.idle();
    await gateway.stop();
    const chunks = await chunksOf(bus, 'r1', 'stdin');
    expect(new Set(chunks.map((c) => c.session)).size).toBe(1);
    expect(Buffer.concat(chunks.map((c) => c.data))).toEqual(Buffer.concat(sent));
    expect(chunks.at(-1)!.eos).toBe(true);
    for (const chunk of chunks) expect(chunk.pauseNs ?? 0n).toBe(0n);
  });
});

describe('gateway while NATS is away', () => {
  it("holds a slow link's bytes until a chunk has its minimum size, then seals it at once", async () => {
    const { gateway, target } = await qsGatewayWithTarget('slow', {
      chunkBytes: 16 * 1024,
      flushMs: 5,
      minChunkBytes: 3000,
      // Never reached here: only the minimum size seals the first chunks.
      maxFlushMs: 60_000,
    });
    // A slow link: pieces well apart, each past the flush time of the chunk it starts.
    const sent = await writePieces(target, 14, 500, () => 10);
    await waitUntil(async () => gateway.publisher.stats.chunksPublished >= 2, 10_000, 'two chunks');
    target.end();
    await waitUntil(async () => (await chunksOf(bus, 'r1', 'slow')).some((c) => c.eos), 10_000, 'the end chunk');
    await gateway.stop();
    const chunks = (await chunksOf(bus, 'r1', 'slow')).filter((c) => !c.eos);
    expect(Buffer.concat(chunks.map((c) => c.data))).toEqual(Buffer.concat(sent));
    // Every chunk but the last (sealed by the end of the session) holds at least the minimum,
    // and is sealed by the read that reaches it (a read holds a piece or two of 500 bytes).
    const sealedBySize = chunks.slice(0, -1).map((c) => c.data.length);
    expect(sealedBySize.length).toBeGreaterThanOrEqual(1);
    for (const size of sealedBySize) expect(size >= 3000 && size < 4000).toBe(true);
  });

  it('keeps reading, drops the oldest bytes past its buffer, and reports them in th-lost', async () => {
    const nats = await PrivateNats.start();
    const privateBus = await connectBus({ url: nats.url, name: 'gateway-outage', prefix: uniquePrefix('gwo') });
    await ensureTopology(privateBus);
    const source = new TcpListenSource('127.0.0.1', 0);
    const gateway = new Gateway({
      bus: privateBus,
      link: { protocol: 'qs', rig: 'r1', link: 'outage' },
      source,
      chunkBytes: 4096,
      flushMs: 5,
      bufferBytes: 64 * 1024,
    });
    await gateway.start();
    const target = await connectTarget(source.boundPort);
    const before = Buffer.alloc(10_000, 1);
    await write(target, before);
    await sleep(100);
    await gateway.publisher.idle();
    await nats.kill();
    // 256 KiB while NATS is down: four times the buffer.
    const during: Buffer[] = [];
    for (let i = 0; i < 64; i++) {
      const piece = Buffer.alloc(4096, 2 + (i % 200));
      during.push(piece);
      await write(target, piece);
      await sleep(2);
    }
    await sleep(100);
    expect(gateway.publisher.stats.bytesDropped).toBeGreaterThan(0);
    await nats.resume();
    target.end();
    await sleep(200);
    await gateway.publisher.idle();
    const dropped = gateway.publisher.stats.bytesDropped;
    await gateway.stop();
    const chunks = await chunksOf(privateBus, 'r1', 'outage');
    await privateBus.close();
    await nats.stop();
    const published = Buffer.concat(chunks.map((c) => c.data));
    const lost = chunks.reduce((n, c) => n + c.lost, 0);
    const sentBytes = before.length + during.reduce((n, p) => n + p.length, 0);
    expect(lost).toBe(dropped);
    expect(published.length + lost).toBe(sentBytes);
    expect(chunks.map((c) => c.chunk)).toEqual(chunks.map((_, i) => i));
    // What was kept is the newest: the last bytes sent are all there, in order.
    const tail = Buffer.concat(during.slice(-8));
    expect(published.subarray(published.length - tail.length)).toEqual(tail);
    expect(published.subarray(0, before.length)).toEqual(before);
  }, 60_000);
});
