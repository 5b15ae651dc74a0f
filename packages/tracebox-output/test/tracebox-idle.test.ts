import { connect } from 'node:net';
import { type Bus, connectBus } from '@tracehub/bus';
import { type DecodedRecord, type RecordBatch, toTraceRecord } from '@tracehub/contracts';
import { RecordFeed } from '@tracehub/live';
import { decodePhonet, StpDecoder, StpStreamWriter } from '@tracehub/stp';
import { natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TraceBoxCounters } from '../src/tracebox-counters.js';
import { TraceBoxOutput } from '../src/tracebox-output.js';

let bus: Bus;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'tracebox-idle-test', prefix: uniquePrefix('tbidle') });
});

afterAll(async () => {
  await bus?.close();
});

const LINK = { protocol: 'stp', rig: 'rigIdle', link: 'swo' } as const;

/** A PhoNet session of `messages` trace messages with a user marker after each third. */
function phonetBatches(messages: number): RecordBatch[] {
  const decoder = new StpDecoder({ output: 'phonet' });
  const batches: RecordBatch[] = [];
  let seq = 0;
  for (let chunk = 0; chunk < messages; chunk++) {
    const decoded: DecodedRecord[] = [];
    const emit = (r: DecodedRecord) => decoded.push(r);
    const w = new StpStreamWriter();
    if (chunk === 0) w.async().version(3).m8(0x10);
    w.c8(0x02).data(4, chunk, 'M');
    const ctx = { hostNs: 1_764_000_000_000_000_000n + BigInt(chunk) };
    decoder.push(w.bytes(), ctx, emit);
    if (chunk % 3 === 2) decoder.userMarker(`mark ${chunk}`, ctx, emit);
    const place = { ...LINK, session: 's1', chunk, hostNs: ctx.hostNs, seq: 0 };
    const records = decoded.map((r) => toTraceRecord(r, { ...place, seq: seq++ }));
    batches.push({ ...LINK, session: 's1', chunk, hostNs: ctx.hostNs.toString(), eos: false, records });
  }
  return batches;
}

function publish(batch: RecordBatch): void {
  bus.nc.publish(bus.names.recSubject(LINK.protocol, LINK.rig, LINK.link), JSON.stringify(batch));
}

describe('the trace box output without clients', () => {
  it('decodes nothing, yet numbers as it does for clients: the next client gets the same marker index and transaction id', async () => {
    const feed = new RecordFeed(bus, undefined, LINK);
    const watched = new TraceBoxCounters();
    const idle = new TraceBoxCounters();
    const withClient = new TraceBoxOutput({ feed, link: LINK, counters: watched });
    const without = new TraceBoxOutput({ feed, link: LINK, counters: idle });
    const watchedPort = await withClient.listen(0, '127.0.0.1');
    const idlePort = await without.listen(0, '127.0.0.1');
    await feed.flush();
    const socket = connect(watchedPort, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (b) => received.push(b));
    await waitUntil(async () => withClient.status().clients.length === 1);

    const batches = phonetBatches(300);
    const last = batches.pop()!;
    const sent = batches.reduce((n, b) => n + b.records.length, 0);
    const fromBase64 = vi.spyOn(Buffer, 'from');
    try {
      for (const b of batches) publish(b);
      await feed.flush();
      await waitUntil(async () => withClient.status().messages === sent && without.status().messages === sent);
      // Only the output with a client decoded the records' bytes.
      const decodedBase64 = fromBase64.mock.calls.filter((call) => (call as unknown[])[1] === 'base64').length;
      expect(decodedBase64).toBe(sent);
    } finally {
      fromBase64.mockRestore();
    }
    // 300 messages less the last, 100 markers less the last: 299 + 99 PhoNet messages.
    expect(sent).toBe(398);
    expect([idle.markerIndex, idle.transaction]).toEqual([99, 397 & 0xff]);
    expect([idle.markerIndex, idle.transaction]).toEqual([watched.markerIndex, watched.transaction]);

    // A client of the idle output from now on: the last message and marker numbered as the other's.
    const late = connect(idlePort, '127.0.0.1');
    const lateReceived: Buffer[] = [];
    late.on('data', (b) => lateReceived.push(b));
    await waitUntil(async () => without.status().clients.length === 1);
    const before = Buffer.concat(received).length;
    publish(last);
    const tail = () => Buffer.concat(received).subarray(before);
    await waitUntil(async () => tail().length > 0 && Buffer.concat(lateReceived).length === tail().length);
    expect(Buffer.concat(lateReceived).equals(tail())).toBe(true);
    const messages = [];
    for (let at = 0, bytes = tail(); at < bytes.length; ) {
      const m = decodePhonet(bytes.subarray(at));
      if (m.status !== 'ok') throw new Error(`not PhoNet at ${at}: ${m.status}`);
      messages.push(m.message);
      at += m.size;
    }
    expect(messages.map((m) => [m.kind, m.transaction])).toEqual([
      ['trace', 398 & 0xff],
      ['marker', 399 & 0xff],
    ]);
    expect(messages[1]).toMatchObject({ kind: 'marker', type: 0x02, index: 100 });
    socket.destroy();
    late.destroy();
    await withClient.close();
    await without.close();
    feed.stop();
  });
});
