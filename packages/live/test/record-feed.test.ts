import { type Bus, connectBus } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import { natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordFeed, type UnreceivedRecords } from '../src/record-feed.js';

let bus: Bus;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'record-feed-test', prefix: uniquePrefix('feed') });
});

afterAll(async () => {
  await bus?.close();
});

function batch(session: string, seqs: number[], eos = false): RecordBatch {
  const records: TraceRecord[] = seqs.map((seq) => ({
    rig: 'rig1',
    link: 'uart0',
    session,
    seq,
    chunk: seq,
    protocol: 'qs',
    hostNs: String(1_764_000_000_000_000_000n + BigInt(seq)),
    targetTs: null,
    kind: 'record',
    type: 6,
    name: 'QS_QEP_TRAN',
    fields: {},
    text: `record ${seq}`,
    raw: '',
  }));
  return {
    protocol: 'qs',
    rig: 'rig1',
    link: 'uart0',
    session,
    chunk: seqs[0],
    hostNs: records[0].hostNs,
    eos,
    records,
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('RecordFeed', () => {
  it('leaves out records it saw already and tells of records that never arrived, per session', async () => {
    const feed = new RecordFeed(bus);
    const seen: string[] = [];
    const gaps: UnreceivedRecords[] = [];
    feed.add(
      (b) => seen.push(...b.records.map((r) => `${r.session}:${r.seq}`)),
      (gap) => gaps.push(gap),
    );
    await feed.flush();
    const subject = bus.names.recSubject('qs', 'rig1', 'uart0');
    const send = (b: RecordBatch) => bus.nc.publish(subject, JSON.stringify(b));
    send(batch('a', range(0, 10)));
    send(batch('a', range(5, 15))); // a decoder sent records 5-9 again (after a takeover)
    send(batch('a', range(5, 10))); // and only old ones
    send(batch('b', range(100, 103))); // a session first seen mid-way: nothing missing
    send(batch('a', range(20, 25))); // 15-19 never arrived
    send(batch('b', range(103, 105), true));
    send(batch('b', range(200, 201))); // after its end, a session starts afresh
    await waitUntil(async () => seen.length === 26);
    expect(seen).toEqual([
      ...range(0, 15).map((s) => `a:${s}`),
      ...range(100, 103).map((s) => `b:${s}`),
      ...range(20, 25).map((s) => `a:${s}`),
      ...range(103, 105).map((s) => `b:${s}`),
      'b:200',
    ]);
    expect(gaps).toEqual([{ protocol: 'qs', rig: 'rig1', link: 'uart0', session: 'a', firstSeq: 15, records: 5 }]);
    expect([feed.duplicates, feed.unreceived]).toEqual([10, 5]);
    feed.stop();
  });
});
