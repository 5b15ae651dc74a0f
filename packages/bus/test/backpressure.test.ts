import { randomBytes } from 'node:crypto';
import { DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Bus,
  consumeInOrder,
  ensureLinkConsumers,
  ensureTopology,
  isStreamFullError,
  publishRawChunk,
  publishRecordBatch,
  StreamUpgradeError,
  streamFill,
} from '../src/index.js';
import { closeTestBus, connectTestBus, plainRecord } from './test-bus.js';

const link = { protocol: 'qs' as const, rig: 'rigB', link: 'uart0' };
const buses: Bus[] = [];

async function freshBus(tag: string): Promise<Bus> {
  const bus = await connectTestBus(tag);
  buses.push(bus);
  return bus;
}

afterEach(async () => {
  for (const bus of buses.splice(0)) await closeTestBus(bus);
});

const chunkOf = (session: string, chunk: number, bytes: number) => ({
  session,
  chunk,
  recvNs: 1n,
  lost: 0,
  eos: false,
  data: new Uint8Array(bytes).fill(chunk & 0xff),
});

describe('the streams under pressure', () => {
  it('keep a chunk until every consumer has taken it, then let it go', async () => {
    const bus = await freshBus('bpkeep');
    await ensureTopology(bus);
    await ensureLinkConsumers(bus, link);
    await publishRawChunk(bus, link, chunkOf('s1', 0, 1000));
    const [raw] = await streamFill(bus);
    expect(raw).toMatchObject({ stream: bus.names.rawStream, messages: 1, maxBytes: 1024 ** 3 });
    // The link's decoder takes it; storage's consumer has not yet: it stays.
    const taken: number[] = [];
    const decoding = await consumeInOrder(
      bus,
      { stream: bus.names.rawStream, durable: bus.names.decoderConsumer(link), filterSubject: bus.names.rawFilter() },
      async (msg) => {
        taken.push(msg.seq);
      },
    );
    await waitFor(() => taken.length === 1);
    await decoding.stop();
    expect((await bus.jsm.streams.info(bus.names.rawStream)).state.messages).toBe(1);
    // Storage takes it too: nothing needs it any more.
    const storage = await bus.js.consumers.get(bus.names.rawStream, bus.names.storageRawConsumer);
    const msg = await storage.next({ expires: 2000 });
    await msg?.ackAck();
    await waitFor(async () => (await bus.jsm.streams.info(bus.names.rawStream)).state.messages === 0);
  });

  it('refuse a publish when full, discarding nothing they hold, and take it once there is room', async () => {
    const bus = await freshBus('bpfull');
    await ensureTopology(bus, { rawMaxBytes: 1 << 20, recMaxBytes: 1 << 20 });
    await ensureLinkConsumers(bus, link);
    let refused: unknown;
    let accepted = 0;
    for (let i = 0; i < 200 && !refused; i++) {
      try {
        await publishRawChunk(bus, link, chunkOf('s1', i, 16 * 1024));
        accepted++;
      } catch (err) {
        refused = err;
      }
    }
    expect(isStreamFullError(refused)).toBe(true);
    expect(accepted).toBeGreaterThan(50);
    const info = await bus.jsm.streams.info(bus.names.rawStream);
    // Every chunk accepted is still there, the first one included.
    expect(info.state.messages).toBe(accepted);
    expect(info.state.first_seq).toBe(1);
    // A re-send of an accepted chunk is still recognised as one (the gateway's retry).
    expect((await publishRawChunk(bus, link, chunkOf('s1', 0, 16 * 1024))).duplicate).toBe(true);
    // The record stream refuses the decoders the same way.
    let recRefused: unknown;
    for (let i = 0; i < 400 && !recRefused; i++) {
      // Text that does not compress, so the stream fills.
      const text = randomBytes(3000).toString('hex');
      try {
        await publishRecordBatch(bus, {
          ...link,
          session: 's1',
          chunk: i,
          hostNs: '1',
          eos: false,
          records: [plainRecord({ ...link, session: 's1', chunk: i }, i, text)],
        });
      } catch (err) {
        recRefused = err;
      }
    }
    expect(isStreamFullError(recRefused)).toBe(true);
    // Both consumers take the first chunk: there is room again for one.
    for (const durable of [bus.names.decoderConsumer(link), bus.names.storageRawConsumer]) {
      const c = await bus.js.consumers.get(bus.names.rawStream, durable);
      const m = await c.next({ expires: 2000 });
      await m?.ackAck();
    }
    await waitFor(async () => {
      try {
        await publishRawChunk(bus, link, chunkOf('s1', accepted, 16 * 1024));
        return true;
      } catch (err) {
        if (!isStreamFullError(err)) throw err;
        return false;
      }
    });
  });

  it('replace a stream of an earlier version (limits retention) only when everything in it was consumed', async () => {
    const bus = await freshBus('bpupgrade');
    const old = {
      name: bus.names.rawStream,
      subjects: [bus.names.rawFilter()],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
    };
    await bus.jsm.streams.add(old);
    await bus.jsm.consumers.add(bus.names.rawStream, { durable_name: 'reader', ack_policy: 'explicit' as never });
    await bus.js.publish(bus.names.rawSubject('qs', 'rigB', 'uart0'), new Uint8Array(10));
    await expect(ensureTopology(bus)).rejects.toThrow(StreamUpgradeError);
    expect((await bus.jsm.streams.info(bus.names.rawStream)).config.retention).toBe(RetentionPolicy.Limits);
    const reader = await bus.js.consumers.get(bus.names.rawStream, 'reader');
    await (await reader.next({ expires: 2000 }))?.ackAck();
    await ensureTopology(bus);
    const info = await bus.jsm.streams.info(bus.names.rawStream);
    expect(info.config.retention).toBe(RetentionPolicy.Interest);
    expect(info.config.discard).toBe(DiscardPolicy.New);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
