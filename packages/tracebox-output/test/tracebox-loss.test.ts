import { connect } from 'node:net';
import { type Bus, connectBus } from '@tracehub/bus';
import { type DecodedRecord, type RecordBatch, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { RecordFeed } from '@tracehub/live';
import { SwdDecoder } from '@tracehub/stp';
import { natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceBoxCounters } from '../src/tracebox-counters.js';
import { TraceBoxOutput } from '../src/tracebox-output.js';

let bus: Bus;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'tracebox-loss-test', prefix: uniquePrefix('tbloss') });
});

afterAll(async () => {
  await bus?.close();
});

const LINK = { protocol: 'stp', rig: 'rigTB', link: 'swo' } as const;

function record(seq: number, fields: TraceRecord['fields'], raw: Uint8Array, kind: TraceRecord['kind']): TraceRecord {
  return {
    ...LINK,
    session: 's1',
    seq,
    chunk: 0,
    hostNs: '1764000000000000000',
    targetTs: null,
    kind,
    type: 0,
    name: kind === 'error' ? 'STP_INPUT_LOST' : 'trace',
    fields,
    text: '',
    raw: Buffer.from(raw).toString('base64'),
  };
}

describe('the trace box output and bytes lost before decoding', () => {
  it('tells a client of bytes the gateway lost (th-lost) with a marker 0x26 OVERFLOW in their place', async () => {
    const feed = new RecordFeed(bus, undefined, LINK);
    const output = new TraceBoxOutput({ feed, link: LINK, counters: new TraceBoxCounters() });
    const port = await output.listen(0, '127.0.0.1');
    await feed.flush();
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (b) => received.push(b));
    await waitUntil(async () => output.status().clients.length === 1);
    // An OST trace message (short header: 0x10, entity, protocol, body length 4), then the loss.
    const trace = Uint8Array.of(0x10, 0x00, 0x84, 0x04, 1, 2, 3, 4);
    const batch: RecordBatch = {
      ...LINK,
      session: 's1',
      chunk: 0,
      hostNs: '1764000000000000000',
      eos: false,
      records: [record(0, {}, trace, 'record'), record(1, { lostBytes: 300 }, new Uint8Array(0), 'error')],
    };
    bus.nc.publish(bus.names.recSubject(LINK.protocol, LINK.rig, LINK.link), JSON.stringify(batch));
    const comment = 'tracehub: 300 bytes of the link lost before here\0';
    // OST marker (stp-protocol.md §10): 0x10 0xF0 0x81 length, 0xFF, type, sender, timestamp (8), index (4), params, comment.
    const markerLength = 4 + 3 + 8 + 4 + 1 + 4 + comment.length;
    await waitUntil(async () => Buffer.concat(received).length >= trace.length + markerLength);
    const bytes = Buffer.concat(received);
    expect(bytes.length).toBe(trace.length + markerLength);
    expect([...bytes.subarray(0, trace.length)]).toEqual([...trace]);
    const marker = bytes.subarray(trace.length);
    expect([...marker.subarray(0, 7)]).toEqual([0x10, 0xf0, 0x81, markerLength - 4, 0xff, 0x26, 0x0b]);
    // Index 0 (never a real one), one 4-byte parameter: the count, big-endian.
    expect(marker.readUInt32BE(15)).toBe(0);
    expect([marker[19], marker.readUInt32BE(20)]).toEqual([4, 300]);
    expect(marker.subarray(24).toString('utf8')).toBe(comment);
    expect(output.status().messages).toBe(1);
    socket.destroy();
    await output.close();
    feed.stop();
  });

  it('tells a client of bytes lost on an SWD link with the same marker, after the frame they cut', async () => {
    const SWD = { protocol: 'swd', rig: 'rigTB', link: 'swd' } as const;
    const feed = new RecordFeed(bus, undefined, SWD);
    const output = new TraceBoxOutput({ feed, link: SWD, counters: new TraceBoxCounters() });
    const port = await output.listen(0, '127.0.0.1');
    await feed.flush();
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (b) => received.push(b));
    await waitUntil(async () => output.status().clients.length === 1);
    // The SWD decoder's own records: a frame, then 40 bytes lost in the middle of the next one.
    const decoded: DecodedRecord[] = [];
    const decoder = new SwdDecoder();
    decoder.push(Uint8Array.of(0xc0, 1, 2, 0xc1, 0xc0, 9), { hostNs: 1n }, (r) => decoded.push(r));
    decoder.push(Uint8Array.of(0xc1, 0xc0, 3, 0xc1), { hostNs: 2n, lostBytes: 40 }, (r) => decoded.push(r));
    const place = { ...SWD, session: 's1', chunk: 0, hostNs: 1n, seq: 0 };
    const records = decoded.map((r, seq) => toTraceRecord(r, { ...place, seq }));
    expect(records.map((r) => r.name)).toEqual(['SWD_MESSAGE', 'SWD_FRAME_VIOLATION', 'SWD_INPUT_LOST', 'SWD_MESSAGE']);
    const batch: RecordBatch = { ...SWD, session: 's1', chunk: 0, hostNs: '1', eos: false, records };
    bus.nc.publish(bus.names.recSubject(SWD.protocol, SWD.rig, SWD.link), JSON.stringify(batch));
    const first = Buffer.from(records[0].raw, 'base64');
    const last = Buffer.from(records[3].raw, 'base64');
    const comment = 'tracehub: 40 bytes of the link lost before here\0';
    const markerLength = 4 + 3 + 8 + 4 + 1 + 4 + comment.length;
    const total = first.length + markerLength + last.length;
    await waitUntil(async () => Buffer.concat(received).length >= total);
    const bytes = Buffer.concat(received);
    expect(bytes.length).toBe(total);
    expect(bytes.subarray(0, first.length).equals(first)).toBe(true);
    const marker = bytes.subarray(first.length, first.length + markerLength);
    expect([...marker.subarray(0, 7)]).toEqual([0x10, 0xf0, 0x81, markerLength - 4, 0xff, 0x26, 0x0b]);
    expect([marker[19], marker.readUInt32BE(20)]).toEqual([4, 40]);
    expect(marker.subarray(24).toString('utf8')).toBe(comment);
    expect(bytes.subarray(first.length + markerLength).equals(last)).toBe(true);
    socket.destroy();
    await output.close();
    feed.stop();
  });
});
