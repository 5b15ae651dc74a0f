// Many workers, no settings: 64 simulated links (each a gateway's publisher, as on a gateway
// host) through three decoder-qs and two storage processes. A decoder and a storage are
// SIGKILLed mid-stream and new ones started; the links spread evenly over the decoders alive,
// and every link's stored records equal the offline decode: nothing lost, nothing doubled.
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { ensureTopology } from '@tracehub/bus';
import type { Database } from '@tracehub/db';
import { LinkPublisher } from '@tracehub/link';
import { fixturePath, natsUrl, sleep, uniquePrefix } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectBus,
  decoded,
  offlineDecode,
  type PipelineTestRun,
  removeBusPrefix,
  sessionsOf,
  startPipelineTestRun,
  startService,
  storedLinkBytes,
  storedSession,
} from './harness.js';

const LINKS = 64;
/** Pieces each link's stream is sent in, one a round (about 150 ms), so every link always has work. */
const ROUNDS = 160;

let run: PipelineTestRun;
let db: Kysely<Database>;
let bus: Awaited<ReturnType<typeof connectBus>>;
const prefix = uniquePrefix('plwk');

beforeAll(async () => {
  run = await startPipelineTestRun('workers');
  ({ db } = run);
  bus = await connectBus({ url: natsUrl(), name: 'workers-check', prefix });
  await ensureTopology(bus);
}, 60_000);

afterAll(async () => {
  await run?.close();
  await bus?.close();
  await removeBusPrefix(natsUrl(), prefix);
});

/** Leases on the fleet's links, counted by the worker holding them (leases of the `dead` pids left out). */
async function linksPerWorker(dead: readonly number[]): Promise<Map<string, number>> {
  const kv = await new Kvm(bus.js).open(bus.names.leaseBucket);
  const held = new Map<string, number>();
  for await (const key of await kv.keys('qs.fleet.*')) {
    const entry = await kv.get(key);
    if (entry?.operation !== 'PUT') continue;
    const owner = entry.string();
    if (dead.some((pid) => owner.endsWith(`:${pid}`))) continue;
    held.set(owner, (held.get(owner) ?? 0) + 1);
  }
  return held;
}

/**
 * The links per live decoder, smallest first, when all 64 are leased by `workers` decoders
 * within one of each other (a killed decoder's leases, still there until they expire, count
 * against it).
 */
async function evenSpread(workers: number, dead: readonly number[] = []): Promise<number[] | undefined> {
  const counts = [...(await linksPerWorker(dead)).values()].sort((a, b) => a - b);
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.length === workers && total === LINKS && counts[counts.length - 1] - counts[0] <= 1
    ? counts
    : undefined;
}

describe('many decoder and storage workers', () => {
  it('share 64 links evenly, and lose and double nothing when a decoder and a storage are killed mid-stream', async () => {
    const env = { natsUrl: natsUrl(), databaseUrl: run.databaseUrl, prefix };
    const decoder = () => startService('decoder-qs', env);
    const storage = () => startService('storage', env);
    const decoders = [await decoder(), await decoder(), await decoder()];
    const storages = [await storage(), await storage()];
    run.services.push(...decoders, ...storages);

    const one = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const stream = Buffer.concat([one, one, one, one]);
    const publishers = Array.from(
      { length: LINKS },
      (_, i) =>
        new LinkPublisher({
          bus,
          link: { protocol: 'qs', rig: 'fleet', link: `sim${i}` },
          chunkBytes: 1024,
          flushMs: 10,
        }),
    );
    for (const p of publishers) p.connected('simulated target');
    const piece = Math.ceil(stream.length / ROUNDS);
    let round = 0;
    const sendRound = async () => {
      for (const p of publishers) p.data(stream.subarray(round * piece, (round + 1) * piece));
      await Promise.all(publishers.map((p) => p.idle()));
      await sleep(100);
      round++;
    };
    // Until the three decoders share the links evenly (at most 50 rounds)...
    let spreadOverThree: number[] | undefined;
    while (round < 50 && !spreadOverThree) {
      await sendRound();
      spreadOverThree = await evenSpread(3);
    }
    // ...then a decoder dies, then a storage, and a new decoder joins...
    const killed = decoders[0].pid;
    decoders[0].child.kill('SIGKILL');
    for (let i = 0; i < 5; i++) await sendRound();
    storages[0].child.kill('SIGKILL');
    for (let i = 0; i < 5; i++) await sendRound();
    run.services.push(await decoder());
    const joinedAt = Date.now();
    // ...until the two that lived and the one that joined share them evenly again.
    let spreadAfterKillAndJoin: number[] | undefined;
    while (round < ROUNDS - 10 && !spreadAfterKillAndJoin) {
      await sendRound();
      spreadAfterKillAndJoin = await evenSpread(3, [killed]);
    }
    const respreadMs = Date.now() - joinedAt;
    run.services.push(await storage());
    while (round < ROUNDS) await sendRound();
    for (const p of publishers) p.disconnected('simulated target done');
    await Promise.all(publishers.map((p) => p.close()));

    const file = join(tmpdir(), `th-workers-${process.pid}.qs`);
    writeFileSync(file, stream);
    const expected = (await offlineDecode(file, 'qs')).map(decoded);
    for (let i = 0; i < LINKS; i++) {
      const sessions = await sessionsOf(db, 'fleet', `sim${i}`);
      expect(sessions, `sim${i}`).toHaveLength(1);
      const stored = await storedSession(db, sessions[0], 60_000);
      expect(stored.length, `records of sim${i}`).toBe(expected.length);
      expect(stored.map(decoded), `sim${i}`).toEqual(expected);
      const link = await storedLinkBytes(db, sessions[0], 30_000);
      expect(link.lost).toBe(0);
      expect(link.bytes.equals(stream), `link bytes of sim${i}`).toBe(true);
    }
    // 64 over three: 21, 21, 22; and again over the two that lived and the one that joined.
    expect(spreadOverThree).toEqual([21, 21, 22]);
    expect(spreadAfterKillAndJoin).toEqual([21, 21, 22]);
    expect(respreadMs).toBeLessThan(10_000);
    // Two storages writing batches of the same links lock rows in one order: none is ever
    // aborted as a deadlock (each would cost a retry).
    expect(run.services.flatMap((p) => p.stdout).filter((line) => line.includes('deadlock detected'))).toEqual([]);
  }, 240_000);
});
