import { Kvm } from '@nats-io/kv';
import {
  type Bus,
  connectBus,
  ensureTopology,
  parseRecordMessage,
  publishRawChunk,
  removeTopology,
} from '@tracehub/bus';
import type { ChunkContext, DecodedRecord, EmitRecord, JsonValue, TraceDecoder } from '@tracehub/contracts';
import { natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DecoderFactory, DecoderWorker, type DecoderWorkerOptions } from '../src/index.js';

/** A small real codec for these tests: one record per '\n'-terminated line. */
class LineDecoder implements TraceDecoder {
  constructor(private partial = '') {}
  push(chunk: Uint8Array, _ctx: ChunkContext, emit: EmitRecord): void {
    const text = this.partial + Buffer.from(chunk).toString('latin1');
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) emit(record('record', line));
  }
  end(_ctx: ChunkContext, emit: EmitRecord): void {
    if (this.partial) emit(record('error', `unterminated: ${this.partial}`));
    this.partial = '';
  }
  snapshot(): JsonValue {
    return { partial: this.partial };
  }
  stats() {
    return {};
  }
}
const record = (kind: DecodedRecord['kind'], text: string): DecodedRecord => ({
  kind,
  type: 0,
  name: kind === 'error' ? 'LINE_ERROR' : 'LINE',
  targetTs: null,
  fields: {},
  text,
  raw: new Uint8Array(0),
});
const factory: DecoderFactory = {
  create: () => new LineDecoder(),
  restore: (_l, _s, snap) => new LineDecoder((snap as { partial: string }).partial),
};

let bus: Bus;
const prefix = uniquePrefix('dw');

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'dw-test', prefix });
  await ensureTopology(bus, { leaseTtlMs: 1500 });
});

afterAll(async () => {
  await removeTopology(bus);
  await bus.close();
});

/** Publishes `chunks` as the raw chunks of `session` on `rigA/link`, then (if `eos`) the chunk that ends it. */
async function publishLines(link: string, session: string, chunks: string[], eos = true) {
  const address = { protocol: 'qs' as const, rig: 'rigA', link };
  const pieces = chunks.map((text) => Buffer.from(text, 'latin1') as Uint8Array);
  if (eos) pieces.push(new Uint8Array(0));
  for (const [i, data] of pieces.entries()) {
    const last = i === chunks.length;
    await publishRawChunk(bus, address, { session, chunk: i, recvNs: BigInt(1000 + i), lost: 0, eos: last, data });
  }
}

/** Every record on the record stream for a link (or every link: ''), in stream order. */
async function recordsOf(
  link: string,
  on: Bus = bus,
): Promise<Array<{ session: string; seq: number; text: string; chunk: number }>> {
  const info = await on.jsm.streams.info(on.names.recStream);
  const out = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await on.jsm.streams.getMessage(on.names.recStream, { seq }).catch(() => null);
    if (!msg || (link !== '' && !msg.subject.endsWith(`.${link}`))) continue;
    for (const r of parseRecordMessage(on.names, msg.subject, msg.header, msg.data).records)
      out.push({ session: r.session, seq: r.seq, text: r.text, chunk: r.chunk });
  }
  return out;
}

/** A started worker of the line codec on `on`, and how many chunks it has decoded so far. */
async function countingWorker(on: Bus, workerId: string, options: Partial<DecoderWorkerOptions> = {}) {
  let decoded = 0;
  const worker = new DecoderWorker({
    bus: on,
    protocols: ['qs'],
    workerId,
    factory,
    tickMs: 300,
    onChunk: () => {
      decoded++;
    },
    ...options,
  });
  await worker.start();
  return { worker, decoded: () => decoded };
}

describe('DecoderWorker', () => {
  it('decodes each link in order, across chunk boundaries, and closes the session', async () => {
    const worker = new DecoderWorker({ bus, protocols: ['qs'], workerId: 'w1', factory, tickMs: 300 });
    await worker.start();
    await publishLines('l1', 's1', ['a\nb', 'c\nd\n', 'e']);
    await publishLines('l2', 's2', ['x\n', 'y\n']);
    await waitUntil(async () => (await recordsOf('l1')).length === 4 && (await recordsOf('l2')).length === 2);
    await worker.stop();
    expect(await recordsOf('l1')).toEqual([
      { session: 's1', seq: 0, text: 'a', chunk: 0 },
      { session: 's1', seq: 1, text: 'bc', chunk: 1 },
      { session: 's1', seq: 2, text: 'd', chunk: 1 },
      { session: 's1', seq: 3, text: 'unterminated: e', chunk: 3 },
    ]);
    expect(await recordsOf('l2')).toEqual([
      { session: 's2', seq: 0, text: 'x', chunk: 0 },
      { session: 's2', seq: 1, text: 'y', chunk: 1 },
    ]);
  });

  it('closes a session that never got its end when the next one starts', async () => {
    const worker = new DecoderWorker({ bus, protocols: ['qs'], workerId: 'w1', factory, tickMs: 300 });
    await worker.start();
    await publishLines('l3', 'old', ['p\nq'], false);
    await publishLines('l3', 'new', ['r\n']);
    await waitUntil(async () => (await recordsOf('l3')).length === 3);
    await worker.stop();
    expect(await recordsOf('l3')).toEqual([
      { session: 'old', seq: 0, text: 'p', chunk: 0 },
      { session: 'old', seq: 1, text: 'unterminated: q', chunk: 1 },
      { session: 'new', seq: 0, text: 'r', chunk: 0 },
    ]);
  });

  it('decodes a link whose settings the codec refuses with the defaults instead of failing its chunks', async () => {
    const strict: DecoderFactory = {
      create: (_l, settings) => {
        if (settings.width === 3) throw new RangeError('width must be 1, 2, 4 or 8');
        return new LineDecoder();
      },
      restore: factory.restore,
    };
    const worker = new DecoderWorker({
      bus,
      protocols: ['qs'],
      workerId: 'w-strict',
      factory: strict,
      tickMs: 300,
      linkSettings: async () => ({ width: 3 }),
    });
    await worker.start();
    await publishLines('l5', 's5', ['u\nv\n']);
    await waitUntil(async () => (await recordsOf('l5')).length === 2);
    await worker.stop();
    expect((await recordsOf('l5')).map((r) => r.text)).toEqual(['u', 'v']);
  });

  it('moves the links of a crashed worker to another, which resumes from the checkpoint', async () => {
    // Each worker has a connection of its own; the crash closes it abruptly (no release, no ack).
    const crashBus = await connectBus({ url: natsUrl(), name: 'dw-crash', prefix });
    const survivorBus = await connectBus({ url: natsUrl(), name: 'dw-survivor', prefix });
    const { worker: crashing, decoded: handled } = await countingWorker(crashBus, 'crashing');
    const lines = Array.from({ length: 40 }, (_, i) => `line${i}\n`);
    await publishLines('l4', 's4', lines.slice(0, 20), false);
    await waitUntil(async () => handled() >= 10);
    // Crash: the connection dies mid-stream; its lease is never released.
    await crashBus.nc.close();
    const survivor = new DecoderWorker({
      bus: survivorBus,
      protocols: ['qs'],
      workerId: 'survivor',
      factory,
      tickMs: 300,
      ackWaitMs: 2000,
    });
    await survivor.start();
    const address = { protocol: 'qs' as const, rig: 'rigA', link: 'l4' };
    for (let i = 20; i < 40; i++) {
      await publishRawChunk(bus, address, {
        session: 's4',
        chunk: i,
        recvNs: BigInt(1000 + i),
        lost: 0,
        eos: false,
        data: Buffer.from(lines[i]),
      });
    }
    await publishRawChunk(bus, address, {
      session: 's4',
      chunk: 40,
      recvNs: 2000n,
      lost: 0,
      eos: true,
      data: new Uint8Array(0),
    });
    await waitUntil(async () => (await recordsOf('l4')).length === 40, 20_000);
    await survivor.stop();
    await survivorBus.close();
    await crashing.stop().catch(() => {});
    const got = await recordsOf('l4');
    expect(got.map((r) => r.text)).toEqual(lines.map((l) => l.trim()));
    expect(got.map((r) => r.seq)).toEqual(lines.map((_, i) => i));
  });

  it("decodes in stream order when a dead worker's chunks come again after later ones, across a session change", async () => {
    const crashBus = await connectBus({ url: natsUrl(), name: 'dw-hold', prefix });
    const survivorBus = await connectBus({ url: natsUrl(), name: 'dw-hold-survivor', prefix });
    // It never checkpoints: every chunk it took is still unacknowledged when it dies.
    const { worker: first, decoded: decodedByFirst } = await countingWorker(crashBus, 'holding', {
      checkpointMs: 600_000,
    });
    const address = { protocol: 'qs' as const, rig: 'rigA', link: 'l6' };
    const chunk = (session: string, index: number, text: string, eos = false) =>
      publishRawChunk(bus, address, {
        session,
        chunk: index,
        recvNs: BigInt(5000 + index),
        lost: 0,
        eos,
        data: Buffer.from(text),
      });
    // Session a: eight lines, the last one cut in two across chunks, and no end chunk.
    for (let i = 0; i < 8; i++) await chunk('a', i, i === 7 ? 'a7-' : `a${i}\n`);
    await waitUntil(async () => decodedByFirst() === 8, 10_000, 'the first worker to decode session a');
    await crashBus.nc.close();
    // Session b comes while session a's chunks are still held by the dead worker.
    for (let i = 0; i < 6; i++) await chunk('b', i, `b${i}\n`);
    await chunk('b', 6, '', true);
    const survivor = new DecoderWorker({
      bus: survivorBus,
      protocols: ['qs'],
      workerId: 'after-holding',
      factory,
      tickMs: 300,
      ackWaitMs: 1500,
    });
    await survivor.start();
    await waitUntil(async () => (await recordsOf('l6')).length === 14, 20_000, 'both sessions decoded');
    await survivor.stop();
    await survivorBus.close();
    await first.stop().catch(() => {});
    const got = await recordsOf('l6');
    expect(got.filter((r) => r.session === 'a').map((r) => [r.seq, r.text])).toEqual([
      ...Array.from({ length: 7 }, (_, i) => [i, `a${i}`]),
      [7, 'unterminated: a7-'],
    ]);
    expect(got.filter((r) => r.session === 'b').map((r) => [r.seq, r.text])).toEqual(
      Array.from({ length: 6 }, (_, i) => [i, `b${i}`]),
    );
    // Session a is closed before session b starts.
    expect(got.findIndex((r) => r.session === 'b')).toBe(8);
  });

  it('goes on decoding a link whose lease its tick refreshed late, refreshing the lease before the chunk', async () => {
    // A bus of its own, for a lease TTL long enough to watch the lease age without expiring.
    const latePrefix = uniquePrefix('dwlate');
    const late = await connectBus({ url: natsUrl(), name: 'dw-late', prefix: latePrefix });
    const ttlMs = 6000;
    await ensureTopology(late, { leaseTtlMs: ttlMs });
    const link = { protocol: 'qs' as const, rig: 'rigL', link: 'late' };
    const chunk = (i: number, text: string) =>
      publishRawChunk(late, link, {
        session: 's-late',
        chunk: i,
        recvNs: BigInt(1000 + i),
        lost: 0,
        eos: false,
        data: Buffer.from(text),
      });
    await chunk(0, 'one\n');
    // The tick, which refreshes the worker's leases, runs once (at start, claiming the link) and
    // not again here: as when a busy event loop holds it back.
    const worker = new DecoderWorker({ bus: late, protocols: ['qs'], workerId: 'late-1', factory, tickMs: 600_000 });
    await worker.start();
    await waitUntil(async () => (await recordsOf('late', late)).length === 1, 10_000, 'the first chunk decoded');
    const leases = await new Kvm(late.js).open(late.names.leaseBucket);
    const written = (await leases.get('qs.rigL.late'))!.created.getTime();
    // The lease is no longer certainly ours (a third of the TTL or less is left), yet not expired.
    await waitUntil(async () => Date.now() - written > ttlMs - ttlMs / 3 + 200, 10_000, 'the lease to age');
    await chunk(1, 'two\n');
    await waitUntil(async () => (await recordsOf('late', late)).length === 2, 10_000, 'the second chunk decoded');
    expect((await recordsOf('late', late)).map((r) => r.text)).toEqual(['one', 'two']);
    expect((await leases.get('qs.rigL.late'))!.revision).toBeGreaterThan(1);
    await worker.stop();
    await removeTopology(late);
    await late.close();
  });

  it('spreads links evenly over the workers alive, and moves them losing nothing when one joins, one leaves and one dies', async () => {
    // A bus of its own: the links of the tests above must not count in the shares.
    const fairPrefix = uniquePrefix('dwfair');
    const fair = await connectBus({ url: natsUrl(), name: 'dw-fair', prefix: fairPrefix });
    await ensureTopology(fair, { leaseTtlMs: 1500 });
    const links = Array.from({ length: 12 }, (_, i) => `b${String(i).padStart(2, '0')}`);
    const nextChunk = new Map<string, number>();
    const sent = new Map<string, string[]>(links.map((l) => [l, []]));
    const publishRound = async (round: number) => {
      for (const link of links) {
        const chunk = nextChunk.get(link) ?? 0;
        nextChunk.set(link, chunk + 1);
        const line = `${link}-${round}`;
        sent.get(link)!.push(line);
        await publishRawChunk(
          fair,
          { protocol: 'qs', rig: 'rigB', link },
          {
            session: `s-${link}`,
            chunk,
            recvNs: BigInt(1000 + chunk),
            lost: 0,
            eos: false,
            data: Buffer.from(`${line}\n`),
          },
        );
      }
    };
    const start = async (id: string) => {
      const own = await connectBus({ url: natsUrl(), name: id, prefix: fairPrefix });
      const worker = new DecoderWorker({
        bus: own,
        protocols: ['qs'],
        workerId: id,
        factory,
        tickMs: 200,
        ackWaitMs: 2000,
      });
      await worker.start();
      return { worker, own };
    };
    const heldOf = (w: DecoderWorker) => w.heldLinks().length;

    const first = await start('fair-1');
    await publishRound(0);
    await waitUntil(async () => heldOf(first.worker) === 12, 10_000, 'the first worker to take every link');

    const second = await start('fair-2');
    const third = await start('fair-3');
    for (let round = 1; round <= 5; round++) await publishRound(round);
    await waitUntil(async () => [first, second, third].every((w) => heldOf(w.worker) === 4), 10_000, 'four links each');

    // One leaves (releases its leases and its membership at once)...
    await first.worker.stop();
    await first.own.close();
    for (let round = 6; round <= 10; round++) await publishRound(round);
    await waitUntil(async () => [second, third].every((w) => heldOf(w.worker) === 6), 10_000, 'six links each');

    // ...and one dies: its leases and membership expire.
    await second.own.nc.close();
    for (let round = 11; round <= 15; round++) await publishRound(round);
    await waitUntil(async () => heldOf(third.worker) === 12, 15_000, 'the survivor to take every link');
    await waitUntil(async () => (await recordsOf('', fair)).length === 12 * 16, 15_000, 'every line decoded');
    await third.worker.stop();
    await third.own.close();
    await second.worker.stop().catch(() => {});

    const all = await recordsOf('', fair);
    await removeTopology(fair);
    await fair.close();
    for (const link of links) {
      const got = all.filter((r) => r.session === `s-${link}`);
      // Every line once, in order, with seqs that follow each other: nothing lost or doubled.
      expect(got.map((r) => r.text)).toEqual(sent.get(link));
      expect(got.map((r) => r.seq)).toEqual(sent.get(link)!.map((_, i) => i));
    }
  }, 60_000);
});
