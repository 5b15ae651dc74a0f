// GET /links/{id}/connection against gateways in process on real NATS: who is connected to a
// tcp-listen link and since when, a second target refused or taking the link, a silent one
// closed (each counted), for a QS and an STP link alike; a 503 when no gateway serves a link.
import type net from 'node:net';
import { upsertLink } from '@tracehub/db';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWatchedTarget, secondTargetAfterFirst, type WatchedTarget } from '../support/tcp-target.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;
const gateways: Gateway[] = [];
const sockets: net.Socket[] = [];
const ids = { refuse: 0, replace: 0, unserved: 0 };
const ports = { refuse: 0, replace: 0 };

beforeAll(async () => {
  api = await testApi('linkconn', { topology: true, settings: { controlTimeoutMs: 2000 } });
  const { db, bus } = api;
  ids.refuse = await upsertLink(db, { rig: 'rigC', name: 'qs-refuse', protocol: 'qs' });
  ids.replace = await upsertLink(db, { rig: 'rigC', name: 'stp-replace', protocol: 'stp' });
  ids.unserved = await upsertLink(db, { rig: 'rigC', name: 'nobody', protocol: 'qs' });
  const refuse = new TcpListenSource('127.0.0.1', 0, { secondTarget: 'refuse' });
  const replace = new TcpListenSource('127.0.0.1', 0, { secondTarget: 'replace', idleTimeoutMs: 300 });
  gateways.push(
    new Gateway({ bus, link: { protocol: 'qs', rig: 'rigC', link: 'qs-refuse' }, source: refuse, flushMs: 5 }),
    new Gateway({ bus, link: { protocol: 'stp', rig: 'rigC', link: 'stp-replace' }, source: replace, flushMs: 5 }),
  );
  for (const g of gateways) await g.start();
  ports.refuse = refuse.boundPort;
  ports.replace = replace.boundPort;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const g of gateways) await g.stop(1000);
  await api?.close();
});

/** `connectWatchedTarget`, closed after the file's tests. */
async function connectTarget(port: number): Promise<WatchedTarget> {
  const target = await connectWatchedTarget(port);
  sockets.push(target.socket);
  return target;
}

/** `secondTargetAfterFirst` 100 ms apart, both closed after the file's tests. */
async function secondTarget(port: number, bytes: number[]) {
  const targets = await secondTargetAfterFirst(port, Buffer.from(bytes), 100);
  sockets.push(targets.first.socket, targets.second.socket);
  return targets;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connection(id: number) {
  const res = await api.app.inject({
    url: `/api/v1/links/${id}/connection`,
    headers: { authorization: `Bearer ${READ_TOKEN}` },
  });
  return { status: res.statusCode, body: res.json() };
}

/**
 * Expects the link's connection to be a 200 saying `target` holds the link, in `gateway`'s
 * current session, with the connections not taken counted as `notTaken`; resolves with it.
 */
async function expectHeldBy(id: number, target: WatchedTarget, gateway: Gateway, notTaken: object) {
  const { status, body } = await connection(id);
  expect(status).toBe(200);
  expect(body).toMatchObject({
    targetConnected: true,
    target: { address: target.address },
    session: gateway.publisher.currentSession,
    notTaken,
  });
  return body;
}

describe('a link connection', () => {
  it('says nobody is connected, and what the link listens with, before a target comes', async () => {
    const { status, body } = await connection(ids.refuse);
    expect(status).toBe(200);
    expect(body).toEqual({
      linkId: ids.refuse,
      targetConnected: false,
      target: null,
      session: null,
      source: {
        kind: 'tcp-listen',
        description: `tcp-listen 127.0.0.1:${ports.refuse}`,
        secondTarget: 'refuse',
        idleTimeoutMs: 30_000,
      },
      notTaken: { refused: 0, replaced: 0, idleClosed: 0 },
    });
  });

  it('shows the first target of a QS link after a second one was refused, with the count', async () => {
    const before = Date.now();
    const { first, second } = await secondTarget(ports.refuse, [0x7e]);
    await second.closed;
    const body = await expectHeldBy(ids.refuse, first, gateways[0], { refused: 1, replaced: 0, idleClosed: 0 });
    expect(Date.parse(body.target.since)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(body.target.since)).toBeLessThanOrEqual(Date.now());
  });

  it('shows the second target of an STP link once it replaced the first, and a silent one closed', async () => {
    const silent = await connectTarget(ports.replace);
    await silent.closed;
    expect((await connection(ids.replace)).body).toMatchObject({
      targetConnected: false,
      target: null,
      source: { kind: 'tcp-listen', secondTarget: 'replace', idleTimeoutMs: 300 },
      notTaken: { refused: 0, replaced: 0, idleClosed: 1 },
    });

    const first = await connectTarget(ports.replace);
    first.socket.write(Buffer.from([0xf0]));
    await sleep(100);
    const secondConnecting = Date.now();
    const second = await connectTarget(ports.replace);
    second.socket.write(Buffer.from([0xf0]));
    await first.closed;
    await sleep(50);
    const body = await expectHeldBy(ids.replace, second, gateways[1], { refused: 0, replaced: 1, idleClosed: 1 });
    expect(Date.parse(body.target.since)).toBeGreaterThanOrEqual(secondConnecting);
  });

  it('is a 503 naming the link when no gateway serves it, and a 404 for an unknown link', async () => {
    const unserved = await connection(ids.unserved);
    expect(unserved.status).toBe(503);
    expect(unserved.body.detail).toMatch(/no gateway serves link rigC\/nobody/);
    expect((await connection(999_999)).status).toBe(404);
  });
});
