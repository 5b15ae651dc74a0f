import { type Bus, connectBus, ensureTopology, removeTopology } from '@tracehub/bus';
import { natsUrl, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointStore, LinkLease, leaseKey } from '../src/index.js';

let bus: Bus;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'lease-test', prefix: uniquePrefix('lease') });
  await ensureTopology(bus, { leaseTtlMs: 1000 });
});

afterAll(async () => {
  await removeTopology(bus);
  await bus.close();
});

describe('link leases', () => {
  it('have exactly one winner, and the other takes over when the winner stops refreshing', async () => {
    const kv = await LinkLease.openBucket(bus);
    const key = leaseKey('qs', 'rig1', 'leased');
    const a = new LinkLease(kv, key, 'worker-a');
    const b = new LinkLease(kv, key, 'worker-b');
    const results = await Promise.all([a.claim(), b.claim()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const [winner, loser] = results[0] ? [a, b] : [b, a];
    expect(await winner.holder()).toBe(winner.owner);
    // While the winner refreshes, the loser cannot claim.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 400));
      expect(await winner.refresh()).toBe(true);
      expect(await loser.claim()).toBe(false);
    }
    // The winner stops refreshing: the entry expires (TTL 1 s) and the loser takes over.
    const start = Date.now();
    let took = false;
    while (!took && Date.now() - start < 5000) {
      await new Promise((r) => setTimeout(r, 200));
      took = await loser.claim();
    }
    expect(took).toBe(true);
    expect(await loser.holder()).toBe(loser.owner);
    expect(await winner.refresh()).toBe(false);
    await loser.release();
    expect(await winner.claim()).toBe(true);
    await winner.release();
  });
});

describe('decoder checkpoints', () => {
  it('keep a decoder checkpoint per link', async () => {
    const store = await CheckpointStore.open(bus);
    expect((await store.get('qs.rig1.none')).checkpoint).toBeUndefined();
    const cp = { session: 's1', lastChunk: 4, nextSeq: 99, ended: false, state: { partial: [1, 2], dict: { a: 'b' } } };
    const rev = await store.put('qs.rig1.uart0', cp, 0);
    expect(await store.get('qs.rig1.uart0')).toEqual({ checkpoint: cp, revision: rev });
    // A worker holding an old revision cannot overwrite newer progress.
    const rev2 = await store.put('qs.rig1.uart0', { ...cp, lastChunk: 5 }, rev);
    await expect(store.put('qs.rig1.uart0', { ...cp, lastChunk: 6 }, rev)).rejects.toThrow(/another worker/);
    await expect(store.put('qs.rig1.uart0', cp, 0)).rejects.toThrow(/another worker/);
    expect((await store.get('qs.rig1.uart0')).revision).toBe(rev2);
  });
});
