// A serial link on a pseudo-terminal pair (socat): the gateway opens one end as its serial
// port, the test is the target on the other; socat stopping is the cable pulled, socat started
// again the cable back: the port is reopened and a new session begins.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, connectBus, ensureTopology, readRawChunkMeta, removeTopology } from '@tracehub/bus';
import { natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLinkSource, Gateway, systemSerialBinding } from '../src/index.js';
import { hangUpAwareBinding } from '../src/sources/serial-hang-up.js';

const dir = mkdtempSync(join(tmpdir(), 'th-serial-'));
const gatewayEnd = join(dir, 'ttyGW');
const targetEnd = join(dir, 'ttyTARGET');
let bus: Bus;
let socat: ChildProcess | undefined;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'serial-test', prefix: uniquePrefix('ser') });
  await ensureTopology(bus);
});

// Each test plugs its own cable in.
afterEach(async () => {
  if (socat && socat.exitCode === null && socat.signalCode === null) await pullOut();
});

afterAll(async () => {
  await removeTopology(bus);
  await bus.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts socat with the pseudo-terminal pair; resolves once both ends exist. */
async function plugIn(): Promise<void> {
  socat = spawn('socat', [`pty,raw,echo=0,link=${gatewayEnd}`, `pty,raw,echo=0,link=${targetEnd}`], {
    stdio: 'ignore',
  });
  await waitUntil(async () => existsSync(gatewayEnd) && existsSync(targetEnd), 10_000, 'the pseudo-terminals');
}

/** Stops socat: both ends go away, as a serial cable pulled out. */
async function pullOut(): Promise<void> {
  const s = socat!;
  s.kill('SIGTERM');
  await new Promise((r) => s.once('exit', r));
  await waitUntil(async () => !existsSync(gatewayEnd), 10_000, 'the pseudo-terminals gone');
}

/** Writes `bytes` as the target, on its end of the pair. */
function send(bytes: Buffer): void {
  const fd = openSync(targetEnd, 'w');
  try {
    writeSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

async function sessionsOf(): Promise<Map<string, { data: Buffer; eos: boolean }>> {
  const sessions = new Map<string, { data: Buffer; eos: boolean }>();
  const info = await bus.jsm.streams.info(bus.names.rawStream);
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await bus.jsm.streams.getMessage(bus.names.rawStream, { seq }).catch(() => null);
    if (!msg || msg.subject !== bus.names.rawSubject('qs', 'r1', 'ser')) continue;
    const meta = readRawChunkMeta(msg.header);
    const s = sessions.get(meta.session) ?? { data: Buffer.alloc(0), eos: false };
    sessions.set(meta.session, { data: Buffer.concat([s.data, msg.data]), eos: s.eos || meta.eos });
  }
  return sessions;
}

describe('a serial link', () => {
  it('reads a session from the port, and a new one after the port went away and came back', async () => {
    await plugIn();
    const gateway = new Gateway({
      bus,
      link: { protocol: 'qs', rig: 'r1', link: 'ser' },
      source: createLinkSource(`serial:${gatewayEnd}?baud=115200`),
      flushMs: 5,
      control: false,
    });
    await gateway.start();
    try {
      await waitUntil(async () => gateway.publisher.target !== undefined, 10_000, 'the port opened');
      send(Buffer.alloc(500, 1));
      await waitUntil(async () => gateway.publisher.stats.bytesIn === 500, 10_000, 'the first bytes read');
      await pullOut();
      await waitUntil(async () => [...(await sessionsOf()).values()].some((s) => s.eos), 10_000, 'the session ended');
      await plugIn();
      await waitUntil(async () => gateway.publisher.target !== undefined, 15_000, 'the port opened again');
      send(Buffer.alloc(300, 2));
      await waitUntil(async () => gateway.publisher.stats.bytesIn === 800, 10_000, 'the bytes after it came back');
      await gateway.publisher.idle();
      await waitUntil(
        async () => [...(await sessionsOf()).values()].reduce((n, s) => n + s.data.length, 0) === 800,
        10_000,
        'every byte published',
      );
    } finally {
      await gateway.stop();
    }
    const sessions = [...(await sessionsOf()).values()];
    expect(sessions.map((s) => s.data)).toEqual([Buffer.alloc(500, 1), Buffer.alloc(300, 2)]);
    expect(sessions[0].eos).toBe(true);
  }, 60_000);

  it('ends the port when the far end hung up before the next read, which then reads 0 bytes', async () => {
    await plugIn();
    const port = await hangUpAwareBinding(systemSerialBinding).open({ path: gatewayEnd, baudRate: 115200 });
    try {
      send(Buffer.from('ab'));
      const buffer = Buffer.alloc(16);
      const first = await port.read(buffer, 0, buffer.length);
      expect(buffer.subarray(0, first.bytesRead).toString()).toBe('ab');
      // No read is parked on the poller when the cable goes: the next read meets the hang-up.
      await pullOut();
      await expect(port.read(buffer, 0, buffer.length)).rejects.toMatchObject({ disconnect: true });
    } finally {
      await port.close().catch(() => {});
    }
  });
});
