// The trace box output of STP links (`?tracebox=`): a real gateway process, the STP decoder
// service and the API; a device streaming a capture into the gateway, clients reading the
// link's output, and a user marker set mid-stream through the API and the CLI.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from '@nats-io/transport-node';
import { getLinkByName, upsertLink } from '@tracehub/db';
import { StpStreamWriter } from '@tracehub/stp';
import { fixturePath, freePort, waitUntil } from '@tracehub/tests/support';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN } from '../api/fixture-data.js';
import type { RunningProcess } from '../foundation/processes.js';
import { apartFromTime, ostMarker, phonetMarker, splitTraceBoxMessages, timeOf } from '../support/trace-box-stream.js';
import { backendsEnv, cli, cliBytes, startService, stopAll } from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';

const RIG = 'rigTB';
/** The real CoreSight capture, repeated: 41 messages a copy, no marker of its own. */
const COPIES = 100;
const MESSAGES_PER_COPY = 41;
/**
 * Then a stream of big messages (8 KB each, 7 MB of output in all), so that the output must
 * drop: more than the kernel can keep for a client that does not read however it tunes the
 * socket (a send buffer of at most 4 MiB, `tcp_wmem`'s default maximum; about 2.2 MB was seen,
 * but a run with 3.5 MB once saw no drop) plus the client's queue.
 */
const BIG_MESSAGES = 880;
/** Messages a client may fall behind before it misses the oldest (the link's `tracebox-queue`). */
const QUEUE = 100;

/** ASYNC, VERSION 3, M8 0x21, C8 0x01, then `count` messages of 1000 D64 words, the last marked. */
function bigMessages(count: number): Buffer {
  const w = new StpStreamWriter().async().version(3).m8(0x21).c8(0x01);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < 999; j++) w.data(8, BigInt(i) * 1_000_000n + BigInt(j));
    w.data(8, BigInt(i), 'M');
  }
  return Buffer.from(w.bytes());
}

let pipeline: PipelineWithApi;
let gateway: RunningProcess;
let work: string;
const ports = { ostDevice: 0, ostOut: 0, phonetDevice: 0, phonetOut: 0 };
let fullFile: string;
let prefixFile: string;
let input: Buffer;
let prefix: Buffer;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('tracebox', { services: ['decoder-stp'] });
  work = mkdtempSync(join(tmpdir(), 'th-tracebox-'));
  const copy = readFileSync(fixturePath('stp', 'coresight_juno.stp'));
  prefix = Buffer.concat(Array.from({ length: COPIES }, () => copy));
  input = Buffer.concat([prefix, bigMessages(BIG_MESSAGES)]);
  fullFile = join(work, 'full.stp');
  prefixFile = join(work, 'prefix.stp');
  writeFileSync(fullFile, input);
  writeFileSync(prefixFile, prefix);
  for (const key of Object.keys(ports) as Array<keyof typeof ports>) ports[key] = await freePort();
  for (const name of ['ost', 'phonet']) await upsertLink(pipeline.db, { rig: RIG, name, protocol: 'stp' });
}, 120_000);

// A gateway of its own for each test: its marker index and PhoNet transaction id start afresh,
// so what a test expects of them does not depend on the tests run before it.
beforeEach(async () => {
  gateway = await startService('gateway', pipeline.env, {
    TRACEHUB_LINKS: [
      `stp/${RIG}/ost=tcp-listen:127.0.0.1:${ports.ostDevice}?tracebox=127.0.0.1:${ports.ostOut}&tracebox-queue=${QUEUE}`,
      `stp/${RIG}/phonet=tcp-listen:127.0.0.1:${ports.phonetDevice}?output=phonet&tracebox=127.0.0.1:${ports.phonetOut}`,
    ].join(';'),
  });
}, 60_000);

afterEach(async () => {
  if (gateway) await stopAll([gateway]);
});

afterAll(async () => {
  await pipeline?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A client of a trace box output port: everything it reads. */
interface Client {
  socket: Socket;
  bytes(): Buffer;
}

async function client(port: number): Promise<Client> {
  const chunks: Buffer[] = [];
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('data', (b) => chunks.push(b));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, bytes: () => Buffer.concat(chunks) };
}

/**
 * A client that does not read until told to (`go`): a Python socket with a 2 KiB receive
 * buffer, so that the kernel holds little for it and the output has to drop on its behalf.
 */
interface SlowClient {
  go(): void;
  bytes(): Buffer;
  child: ChildProcess;
}

async function slowClient(port: number): Promise<SlowClient> {
  const script = [
    'import socket, sys',
    's = socket.socket()',
    's.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)',
    `s.connect(("127.0.0.1", ${port}))`,
    'sys.stderr.write("connected\\n"); sys.stderr.flush()',
    'sys.stdin.readline()',
    'while True:',
    '    b = s.recv(65536)',
    '    if not b: break',
    '    sys.stdout.buffer.write(b); sys.stdout.buffer.flush()',
  ].join('\n');
  const child = spawn('python3', ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (b: Buffer) => chunks.push(b));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => b.toString().includes('connected') && resolve());
    child.once('exit', (code) => reject(new Error(`slow client exited (${code})`)));
  });
  return { go: () => child.stdin!.write('go\n'), bytes: () => Buffer.concat(chunks), child };
}

/** Waits until the gateway has logged `count` trace box clients of `link`. */
async function clientsConnected(link: string, count: number): Promise<void> {
  await waitUntil(
    async () =>
      gateway.stdout.filter((l) => l.includes('trace box client connected') && l.includes(`stp/${RIG}/${link}`))
        .length >= count,
    10_000,
    `${count} trace box clients of ${link}`,
  );
}

/** Counts the bytes the gateway publishes for a link (its raw chunks). */
function publishedBytes(link: string): { bytes(): number; sub: Subscription } {
  let total = 0;
  const sub = pipeline.bus.nc.subscribe(pipeline.bus.names.rawSubject('stp', RIG, link), {
    callback: (_err, msg) => {
      total += msg.data.length;
    },
  });
  return { bytes: () => total, sub };
}

/**
 * Streams the capture into the link as a device: the first half, then (once the gateway has
 * published every byte of it) `markMidStream`, then the second half, then the device leaves.
 */
async function streamWithMarker(device: number, link: string, markMidStream: () => Promise<void>): Promise<void> {
  const published = publishedBytes(link);
  await pipeline.bus.nc.flush();
  const socket = connect({ host: '127.0.0.1', port: device });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(prefix);
  await waitUntil(async () => published.bytes() >= prefix.length, 30_000, `${link}: the first half published`);
  expect(published.bytes()).toBe(prefix.length);
  await markMidStream();
  socket.end(input.subarray(prefix.length));
  await waitUntil(async () => published.bytes() >= input.length, 30_000, `${link}: the second half published`);
  published.sub.unsubscribe();
}

/** What `tracehub decode --format <format>` writes for a file, as messages. */
async function decoded(format: 'ost-bin' | 'phonet-bin', file: string): Promise<Buffer[]> {
  return splitTraceBoxMessages(await cliBytes(['decode', '--protocol', 'stp', '--format', format, file]));
}

const hexes = (ms: Uint8Array[]) => ms.map(apartFromTime);

describe('the trace box output of an STP link', () => {
  it('two clients get exactly the decode --format ost-bin messages with a user marker set mid-stream through the API; a slow client misses the oldest, told so, and the others nothing', async () => {
    const full = await decoded('ost-bin', fullFile);
    const firstHalf = await decoded('ost-bin', prefixFile);
    expect(full.length).toBe(COPIES * MESSAGES_PER_COPY + BIG_MESSAGES);
    expect(firstHalf.length).toBe(COPIES * MESSAGES_PER_COPY);
    // The box's first marker since it started: index 1, sender 0x01 (main), the comment a C string.
    const comment = 'run 7: valve opened';
    const expected = [
      ...full.slice(0, firstHalf.length),
      ostMarker(0x02, 0x01, 1, [], comment),
      ...full.slice(firstHalf.length),
    ];

    const a = await client(ports.ostOut);
    const b = await client(ports.ostOut);
    const slow = await slowClient(ports.ostOut);
    await clientsConnected('ost', 3);
    const link = await getLinkByName(pipeline.db, RIG, 'ost');
    let markedAt = 0n;
    await streamWithMarker(ports.ostDevice, 'ost', async () => {
      markedAt = BigInt(Date.now()) * 1_000_000n;
      const res = await pipeline.app.inject({
        method: 'POST',
        url: `/api/v1/links/${link!.id}/markers`,
        headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
        payload: { comment },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().marker).toEqual({ kind: 'user', comment });
    });
    const total = expected.reduce((n, m) => n + m.length, 0);
    await waitUntil(
      async () => a.bytes().length >= total && b.bytes().length >= total,
      60_000,
      'both clients have it all',
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}: ${a.bytes().length}, ${b.bytes().length} of ${total} bytes\n${gateway.stdout.slice(-20).join('\n')}\n${gateway.stderr.slice(-20).join('\n')}`,
      );
    });
    for (const c of [a, b]) {
      const got = splitTraceBoxMessages(c.bytes());
      expect(got.length).toBe(expected.length);
      expect(hexes(got)).toEqual(hexes(expected));
      // The marker's time is the gateway's clock when it was set (Fido time, flag 1101).
      const marker = got[firstHalf.length];
      expect(marker[7] >> 4).toBe(0b1101);
      // (60 bits of ns since the epoch: the field wraps every 36.5 years.)
      const ms = Number(BigInt.asUintN(60, timeOf(marker) - markedAt) / 1_000_000n);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(5000);
    }

    // The slow client: a run from the start, one OVERFLOW marker (index 0) saying how many it
    // missed, then the rest in order to the end.
    slow.go();
    const last = apartFromTime(expected.at(-1)!);
    await waitUntil(
      async () => {
        const bytes = slow.bytes();
        try {
          const ms = splitTraceBoxMessages(bytes);
          return ms.length > 0 && apartFromTime(ms.at(-1)!) === last;
        } catch {
          return false;
        }
      },
      30_000,
      'the slow client reads to the end',
    );
    const got = splitTraceBoxMessages(slow.bytes());
    const notices = got.map((m, i) => ({ m, i })).filter(({ m }) => m[2] === 0x81 && m[5] === 0x26);
    expect(notices.length).toBe(1);
    const { m: notice, i: at } = notices[0];
    // Short OST marker: index at 15, parameter length at 19, the count (32 bits) at 20, then the comment.
    const missed = notice.readUInt32BE(20);
    const text = notice.subarray(24).toString('utf8');
    expect(notice.readUInt32BE(15)).toBe(0);
    expect(notice[19]).toBe(4);
    expect(text).toBe(`tracehub: ${missed} records dropped: this client was slower than the stream\0`);
    expect(missed).toBeGreaterThan(0);
    expect(got.length - 1 + missed).toBe(expected.length);
    expect(hexes(got.slice(0, at))).toEqual(hexes(expected.slice(0, at)));
    expect(hexes(got.slice(at + 1))).toEqual(hexes(expected.slice(at + missed)));
    a.socket.destroy();
    b.socket.destroy();
    slow.child.kill();
  }, 180_000);

  it('a PhoNet link: decode --format phonet-bin messages, a marker set with tracehub link mark, the gateway counting markers and transactions', async () => {
    const full = await decoded('phonet-bin', fullFile);
    const firstHalf = await decoded('phonet-bin', prefixFile);
    const comment = 'mark from the CLI';
    // The gateway's first marker; one transaction counter for every PhoNet message the
    // gateway sends, so the messages after the marker count on by one.
    const expected = [
      ...full.slice(0, firstHalf.length),
      phonetMarker(0x02, 0x01, 0, 1, [], comment),
      ...full.slice(firstHalf.length),
    ].map((m, i) => {
      const copy = Buffer.from(m);
      copy[8] = i & 0xff;
      return copy;
    });
    const a = await client(ports.phonetOut);
    const b = await client(ports.phonetOut);
    await clientsConnected('phonet', 2);
    await streamWithMarker(ports.phonetDevice, 'phonet', async () => {
      const out = await cli(['link', 'mark', '--rig', RIG, '--link', 'phonet', comment], backendsEnv(pipeline.env));
      expect(out).toMatch(/marker set in session/);
    });
    const total = expected.reduce((n, m) => n + m.length, 0);
    await waitUntil(
      async () => a.bytes().length >= total && b.bytes().length >= total,
      60_000,
      'both clients have it all',
    );
    for (const c of [a, b]) {
      const got = splitTraceBoxMessages(c.bytes());
      expect(got.length).toBe(expected.length);
      expect(hexes(got)).toEqual(hexes(expected));
      c.socket.destroy();
    }
  }, 180_000);

  it('a time base set through the API mid-stream: the two 0x03 markers, "Old timestamp!" then "New timestamp!", numbered on from the gateway\'s markers, and the new base after', async () => {
    const before = gateway.stdout.filter((l) => l.includes('trace box client connected')).length;
    const a = await client(ports.ostOut);
    await waitUntil(
      async () => gateway.stdout.filter((l) => l.includes('trace box client connected')).length > before,
      10_000,
      'the client taken',
    );
    const link = await getLinkByName(pipeline.db, RIG, 'ost');
    const published = publishedBytes('ost');
    await pipeline.bus.nc.flush();
    const device = connect({ host: '127.0.0.1', port: ports.ostDevice });
    await new Promise<void>((resolve) => device.once('connect', resolve));
    const copy = readFileSync(fixturePath('stp', 'coresight_juno.stp'));
    device.write(copy);
    await waitUntil(async () => published.bytes() >= copy.length, 30_000, 'the capture published');
    const perCopy = (await decoded('ost-bin', fixturePath('stp', 'coresight_juno.stp'))).length;
    const messages = async (count: number, what: string) =>
      waitUntil(
        async () => {
          try {
            return splitTraceBoxMessages(a.bytes()).length >= count;
          } catch {
            return false;
          }
        },
        30_000,
        what,
      );
    // A user marker first (this gateway's first, index 1), so that the time base's markers
    // have a marker of the gateway's own to number on from.
    const mark = await pipeline.app.inject({
      method: 'POST',
      url: `/api/v1/links/${link!.id}/markers`,
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      payload: { comment: 'before the time base' },
    });
    expect(mark.statusCode, mark.body).toBe(200);
    await messages(perCopy + 1, 'the user marker');
    const res = await pipeline.app.inject({
      method: 'POST',
      url: `/api/v1/links/${link!.id}/time-base`,
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      payload: { offsetNs: '1000000000' },
    });
    expect(res.statusCode, res.body).toBe(200);
    device.end(copy);
    await waitUntil(async () => published.bytes() >= 2 * copy.length, 30_000, 'the second copy published');
    published.sub.unsubscribe();
    await messages(2 * perCopy + 3, 'both copies and the markers');
    const got = splitTraceBoxMessages(a.bytes());
    const [old, now] = [got[perCopy + 1], got[perCopy + 2]];
    // Markers 2 and 3 of this gateway (the user marker above was its first), sender 0x01, no parameters.
    expect(old.subarray(0, 7).toString('hex')).toBe(`10f081${(3 + 8 + 4 + 1 + 15).toString(16)}ff0301`);
    expect([old.readUInt32BE(15), now.readUInt32BE(15)]).toEqual([2, 3]);
    expect(old.subarray(20).toString('latin1')).toBe('Old timestamp!\0');
    expect(now.subarray(20).toString('latin1')).toBe('New timestamp!\0');
    expect(timeOf(now) - timeOf(old)).toBe(1_000_000_000n);
    a.socket.destroy();
    device.destroy();
  }, 120_000);
});
