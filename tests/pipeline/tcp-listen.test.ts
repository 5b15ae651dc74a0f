// tcp-listen links against a real gateway process: a second target, a silent client, and the
// gateway's metrics while its NATS server is away.
import { freePort, PrivateNats, uniquePrefix, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../foundation/processes.js';
import { connectWatchedTarget, secondTargetAfterFirst } from '../support/tcp-target.js';
import { healthPortOf, requireBuild, startService, stopAll } from './harness.js';

let nats: PrivateNats;
let gateway: RunningProcess;
let healthPort: number;
/** A link per test: no test sees what another did to its link. */
const ports = { refuse: 0, replace: 0, idle: 0, moving: 0 };

beforeAll(async () => {
  requireBuild();
  nats = await PrivateNats.start();
  ports.refuse = await freePort();
  ports.replace = await freePort();
  ports.idle = await freePort();
  ports.moving = await freePort();
  gateway = await startService(
    'gateway',
    { natsUrl: nats.url, databaseUrl: '', prefix: uniquePrefix('tl') },
    {
      TRACEHUB_LINKS: [
        `qs/rigL/refuse=tcp-listen:127.0.0.1:${ports.refuse}?secondTarget=refuse`,
        `qs/rigL/replace=tcp-listen:127.0.0.1:${ports.replace}?secondTarget=replace`,
        `qs/rigL/idle=tcp-listen:127.0.0.1:${ports.idle}?idleTimeoutMs=500`,
        `qs/rigL/moving=tcp-listen:127.0.0.1:${ports.moving}`,
      ].join(';'),
    },
  );
  healthPort = healthPortOf(gateway);
}, 60_000);

afterAll(async () => {
  if (gateway) await stopAll([gateway]);
  await nats?.stop();
});

async function metric(name: string, ...labels: string[]): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`tracehub_${name}{`) && labels.every((x) => l.includes(x)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function logLine(pattern: RegExp, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = gateway.stdout.find((l) => pattern.test(l));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no log line matching ${pattern}:\n${gateway.stdout.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Expects the gateway to have logged `msg` for the link `qs/rigL/<link>` and to count one
 * connection it did not take there as `event`; resolves with the log line.
 */
async function expectNotTakenOnce(link: string, msg: string, event: string) {
  const line = JSON.parse(await logLine(new RegExp(`"msg":"${msg}"`)));
  expect(line.link).toBe(`qs/rigL/${link}`);
  expect(await metric('gateway_connections_not_taken_total', `link="${link}"`, `event="${event}"`)).toBe(1);
  return line;
}

const within = (p: Promise<void>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('a tcp-listen link', () => {
  it('refuses a second target when told to, logs it and counts it, and keeps the first', async () => {
    const { first, second } = await secondTargetAfterFirst(ports.refuse, Buffer.from([0x7e]), 200);
    expect(await within(second.closed, 2000)).toBe(true);
    expect(first.socket.destroyed).toBe(false);
    const line = await expectNotTakenOnce('refuse', 'connection refused', 'refused');
    expect(line.why).toMatch(/is connected/);
    first.socket.destroy();
  });

  it('lets a second target replace the first by default, logged and counted', async () => {
    const { first, second } = await secondTargetAfterFirst(ports.replace, Buffer.from([0x7e]), 200);
    expect(await within(first.closed, 2000)).toBe(true);
    expect(second.socket.destroyed).toBe(false);
    await expectNotTakenOnce('replace', 'connection replaced', 'replaced');
    second.socket.destroy();
  });

  it('closes a connection that sends nothing before its idle timeout, so the real target gets in', async () => {
    const silent = await connectWatchedTarget(ports.idle);
    const t0 = Date.now();
    expect(await within(silent.closed, 3000)).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    await logLine(/"msg":"idle connection closed"/);
    expect(await metric('gateway_connections_not_taken_total', 'link="idle"', 'event="idle-closed"')).toBe(1);
    const target = await connectWatchedTarget(ports.idle);
    target.socket.write(Buffer.from([0x7e, 0x7e]));
    expect(await within(target.closed, 1000)).toBe(false);
    target.socket.destroy();
  });

  it('keeps its metrics moving while NATS is away', async () => {
    const target = await connectWatchedTarget(ports.moving);
    target.socket.write(Buffer.alloc(1000, 0x11));
    await until(
      'the first bytes read',
      async () => (await metric('gateway_bytes_read_total', 'link="moving"')) === 1000,
    );
    // Published, so that what is queued below is what came while NATS was away.
    await until('the first bytes published', async () => (await metric('gateway_queued_bytes', 'link="moving"')) === 0);
    await nats.kill();
    try {
      target.socket.write(Buffer.alloc(200_000, 0x22));
      await until(
        'the bytes read while NATS is away',
        async () => (await metric('gateway_bytes_read_total', 'link="moving"')) === 201_000,
      );
      // Queued as it goes, once the chunk that was being published when NATS went is back in the queue.
      await until(
        'the bytes queued while NATS is away',
        async () => (await metric('gateway_queued_bytes', 'link="moving"')) >= 200_000,
      );
    } finally {
      await nats.resume();
      target.socket.destroy();
    }
  }, 30_000);
});
