import { headers as natsHeaders } from '@nats-io/transport-node';
import {
  type BatchRecord,
  type DecodedRecord,
  Headers,
  type RecordBatch,
  toBatchRecord,
  toTraceRecord,
} from '@tracehub/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Bus,
  ControlTimeoutError,
  connectBus,
  consumeInOrder,
  ensureTopology,
  isCompressedPayload,
  MAX_ANSWER_TIMEOUT_MS,
  MAX_BATCH_PAYLOAD,
  MAX_CONTROL_BYTES,
  NoGatewayError,
  PAYLOAD_HEADER,
  parseRecordMessage,
  publishRawChunk,
  publishRecordBatch,
  RECORDS_BYTES_HEADER,
  readRawChunkMeta,
  readRecordBatchMeta,
  readRecordMessage,
  recordPayloadJson,
  recordsJsonOf,
  requestControl,
  SUMMARY_HEADER,
  serveControl,
  ZSTD_RECORDS_PAYLOAD,
} from '../src/index.js';
import { closeTestBus, connectTestBus, plainRecord } from './test-bus.js';

let bus: Bus;
const link = { protocol: 'qs' as const, rig: 'rig1', link: 'uart0' };

beforeAll(async () => {
  bus = await connectTestBus('bus', { leaseTtlMs: 1000 });
});

afterAll(() => closeTestBus(bus));

describe('raw chunks', () => {
  it('come back from the stream with their headers', async () => {
    const data = new Uint8Array([0x7e, 1, 2, 0x7d, 0x5e]);
    const ack = await publishRawChunk(bus, link, {
      session: 'sA',
      chunk: 0,
      recvNs: 1_700_000_000_123_456_789n,
      lost: 12,
      eos: false,
      data,
    });
    expect(ack.duplicate).toBe(false);
    const msg = await bus.jsm.streams.getMessage(bus.names.rawStream, { seq: ack.seq });
    expect(msg).not.toBeNull();
    expect(msg!.subject).toBe(bus.names.rawSubject('qs', 'rig1', 'uart0'));
    expect([...msg!.data]).toEqual([...data]);
    expect(msg!.header.get(Headers.MsgId)).toBe('sA.0');
    expect(readRawChunkMeta(msg!.header)).toEqual({
      session: 'sA',
      chunk: 0,
      recvNs: 1_700_000_000_123_456_789n,
      lost: 12,
      eos: false,
    });
  });

  it('are de-duplicated when published twice', async () => {
    const chunk = { session: 'sB', chunk: 7, recvNs: 1n, lost: 0, eos: false, data: new Uint8Array([1]) };
    const first = await publishRawChunk(bus, link, chunk);
    const second = await publishRawChunk(bus, link, chunk);
    expect(first.duplicate).toBe(false);
    expect(second.duplicate).toBe(true);
    expect(second.seq).toBe(first.seq);
  });

  it('reject bad headers with a message naming the header', () => {
    expect(() => readRawChunkMeta(undefined)).toThrow(/no headers/);
  });

  it('carry the pauses inside them, as stretches at increasing offsets', async () => {
    const segments = [
      { offset: 0, pauseNs: 2_000_000n, recvNs: 10n },
      { offset: 3, pauseNs: 150_000_000n, recvNs: 20n },
    ];
    const data = new Uint8Array([1, 2, 3, 4, 5]);
    const l = { ...link, link: 'stretches' };
    await publishRawChunk(bus, l, {
      session: 'sP',
      chunk: 0,
      recvNs: 20n,
      lost: 0,
      eos: false,
      pauseNs: 2_000_000n,
      segments,
      data,
    });
    const msg = await bus.jsm.streams.getMessage(bus.names.rawStream, {
      last_by_subj: bus.names.rawSubject('qs', 'rig1', 'stretches'),
    });
    expect(readRawChunkMeta(msg!.header)).toMatchObject({ pauseNs: 2_000_000n, segments });
    const bad = natsHeaders();
    bad.set(Headers.Session, 's');
    bad.set(Headers.Chunk, '0');
    bad.set(Headers.RecvNs, '1');
    bad.set(Headers.Segments, '0:1:1,0:1:1');
    expect(() => readRawChunkMeta(bad)).toThrow(/th-segments/);
  });
});

describe('ordered consumer', () => {
  it('acks after the handler and re-delivers a failed message before later ones', async () => {
    const l = { ...link, link: 'ordered' };
    for (let i = 0; i < 5; i++) {
      await publishRawChunk(bus, l, {
        session: 'sC',
        chunk: i,
        recvNs: 1n,
        lost: 0,
        eos: false,
        data: new Uint8Array([i]),
      });
    }
    const seen: number[] = [];
    let failedOnce = false;
    let resolveAll: () => void;
    const all = new Promise<void>((r) => (resolveAll = r));
    const options = {
      stream: bus.names.rawStream,
      durable: 'ordered_test',
      filterSubject: bus.names.rawSubject('qs', 'rig1', 'ordered'),
      ackWaitMs: 2000,
      retryDelayMs: 50,
    };
    const handle = await consumeInOrder(bus, options, async (msg) => {
      const chunk = readRawChunkMeta(msg.headers).chunk;
      if (chunk === 2 && !failedOnce) {
        failedOnce = true;
        throw new Error('transient');
      }
      seen.push(chunk);
      if (seen.length === 3) resolveAll();
    });
    await all;
    await handle.stop();
    expect(seen).toEqual([0, 1, 2]);
    // A new consumer on the same durable resumes after the last acked message.
    const rest: number[] = [];
    let resolveRest: () => void;
    const restDone = new Promise<void>((r) => (resolveRest = r));
    const again = await consumeInOrder(bus, options, async (msg) => {
      rest.push(readRawChunkMeta(msg.headers).chunk);
      if (rest.length === 2) resolveRest();
    });
    await restDone;
    await again.stop();
    expect(rest).toEqual([3, 4]);
  });
});

describe('record batches', () => {
  const record = (seq: number, text: string) => plainRecord({ ...link, session: 'sD', chunk: 3 }, seq, text);
  const batchOf = (session: string, chunk: number, eos: boolean, records: RecordBatch['records']): RecordBatch => ({
    protocol: 'qs',
    rig: 'rig1',
    link: 'uart0',
    session,
    chunk,
    hostNs: '1',
    eos,
    records,
  });

  it('split large batches into parts with stable ids that de-duplicate', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => record(i, 'x'.repeat(400)));
    const batch = batchOf('sD', 3, true, records);
    const acks = await publishRecordBatch(bus, batch);
    expect(acks.length).toBeGreaterThan(1);
    const again = await publishRecordBatch(bus, batch);
    expect(again.every((a) => a.duplicate)).toBe(true);
    const parts = [];
    for (const ack of acks) {
      const msg = await bus.jsm.streams.getMessage(bus.names.recStream, { seq: ack.seq });
      // Each part's records as one zstd frame; their JSON within the size a part may have.
      expect(msg!.header.get(PAYLOAD_HEADER)).toBe(ZSTD_RECORDS_PAYLOAD);
      expect(isCompressedPayload(msg!.data)).toBe(true);
      const json = recordPayloadJson(msg!.data);
      expect(json.length).toBe(Number(msg!.header.get(RECORDS_BYTES_HEADER)));
      expect(json.length).toBeLessThanOrEqual(MAX_BATCH_PAYLOAD);
      expect(msg!.data.length).toBeLessThan(json.length / 10);
      parts.push(parseRecordMessage(bus.names, msg!.subject, msg!.header, msg!.data));
    }
    expect(parts.flatMap((p) => p.records.map((r) => r.seq))).toEqual(records.map((r) => r.seq));
    expect(parts.map((p) => p.eos)).toEqual([...parts.slice(1).map(() => false), true]);
  });

  it('split a batch whose summary would not fit a header (thousands of dictionary names in one chunk)', async () => {
    // Object dictionary records as the QS decoder makes them: each name is in its part's summary.
    const records = Array.from({ length: 1500 }, (_, i) => ({
      ...record(i, `           Obj-Dict 0x${(0x100000 + i * 16).toString(16).padStart(16, '0')}->object_number_${i}`),
      kind: 'dict' as const,
      type: 61,
      name: 'QS_OBJ_DICT',
      fields: { obj: `0x${(0x100000 + i * 16).toString(16)}`, name: `object_number_${i}` },
    }));
    const batch = batchOf('sF', 1, false, records);
    const acks = await publishRecordBatch(bus, batch);
    expect(acks.length).toBeGreaterThan(2);
    const parts = [];
    for (const ack of acks) {
      const msg = await bus.jsm.streams.getMessage(bus.names.recStream, { seq: ack.seq });
      expect(Buffer.byteLength(msg!.header.get(SUMMARY_HEADER))).toBeLessThanOrEqual(48 * 1024);
      parts.push(parseRecordMessage(bus.names, msg!.subject, msg!.header, msg!.data));
    }
    expect(parts.flatMap((p) => p.records.map((r) => r.seq))).toEqual(records.map((r) => r.seq));
  });

  it("carry each record without its batch's place, and give every record back whole", async () => {
    const decoded = (seq: number): DecodedRecord => ({
      kind: 'record',
      type: 7,
      name: 'QS_QEP_DISPATCH',
      targetTs: 1000n + BigInt(seq),
      qs: { obj: 'l_table', sig: 'EAT_SIG' },
      fields: { n: seq },
      text: `line ${seq}`,
      raw: new Uint8Array([seq, 1, 2]),
    });
    const place = { ...link, session: 'sW', chunk: 4, hostNs: 1795000000000000000n };
    const batch: RecordBatch<BatchRecord> = {
      ...link,
      session: 'sW',
      chunk: 4,
      hostNs: '1795000000000000000',
      eos: false,
      records: [0, 1].map((seq) => toBatchRecord(decoded(seq), { ...place, seq })),
    };
    const [ack] = await publishRecordBatch(bus, batch);
    const msg = await bus.jsm.streams.getMessage(bus.names.recStream, { seq: ack.seq });
    const onTheWire = JSON.parse(`[${Buffer.from(recordPayloadJson(msg!.data)).toString()}]`);
    expect(onTheWire.map((r: object) => Object.keys(r))).toEqual([
      ['seq', 'chunk', 'hostNs', 'targetTs', 'kind', 'type', 'name', 'fields', 'text', 'raw', 'qs'],
      ['seq', 'chunk', 'hostNs', 'targetTs', 'kind', 'type', 'name', 'fields', 'text', 'raw', 'qs'],
    ]);
    // Whole again, as the codec's own record would be, keys in the same order.
    const read = parseRecordMessage(bus.names, msg!.subject, msg!.header, msg!.data).records;
    const whole = [0, 1].map((seq) => toTraceRecord(decoded(seq), { ...place, seq }));
    expect(read).toEqual(whole);
    expect(JSON.stringify(read)).toBe(JSON.stringify(whole));
    expect(read[1]).toMatchObject({ rig: 'rig1', link: 'uart0', session: 'sW', protocol: 'qs', seq: 1, chunk: 4 });
  });

  it('carry their envelope in headers, and their records as a frame storage keeps as it is', async () => {
    const tricky = {
      ...record(0, 'text with "records":[ inside'),
      fields: { records: [1, 2], note: '"records":[' },
    };
    const batch: RecordBatch = {
      protocol: 'qs',
      rig: 'rig1',
      link: 'uart0',
      session: 'sE',
      chunk: 7,
      hostNs: '1795000000000000042',
      eos: true,
      sessionRecordCount: 12,
      records: [tricky, record(1, 'second')],
    };
    const [ack] = await publishRecordBatch(bus, batch);
    const msg = await bus.jsm.streams.getMessage(bus.names.recStream, { seq: ack.seq });
    const meta = readRecordBatchMeta(bus.names, msg!.subject, msg!.header);
    const { records: _records, ...envelope } = batch;
    const { summary, ...fromHeaders } = meta!;
    expect(fromHeaders).toEqual({ ...envelope, recordCount: 2 });
    // What storage keeps beside the records, worked out here by hand from the two records.
    expect(summary).toMatchObject({
      firstSeq: 0,
      lastSeq: 1,
      recordCount: 2,
      minHostNs: '1',
      maxHostNs: '1',
      minTargetTs: null,
      firstChunk: 3,
      lastChunk: 3,
      errorCount: 0,
      names: ['X'],
      kinds: ['record'],
      objs: [],
      states: null,
      dictionary: [],
      targetInfo: null,
    });
    const { meta: read, records } = readRecordMessage(bus.names, msg!.subject, msg!.header, msg!.data);
    expect(read).toEqual(meta);
    expect('frame' in records && records.frame).toEqual(msg!.data);
    const inside = recordPayloadJson(msg!.data);
    expect('jsonBytes' in records && records.jsonBytes).toBe(inside.length);
    expect(JSON.parse(`[${Buffer.from(inside).toString()}]`)).toEqual(batch.records);
    expect(parseRecordMessage(bus.names, msg!.subject, msg!.header, msg!.data)).toEqual(batch);
    // An empty batch is an empty frame.
    const [emptyAck] = await publishRecordBatch(bus, { ...batch, chunk: 8, records: [] });
    const empty = await bus.jsm.streams.getMessage(bus.names.recStream, { seq: emptyAck.seq });
    expect(recordPayloadJson(empty!.data).length).toBe(0);
    // Another publisher's layout (the batch as JSON): its records are cut out without parsing.
    const other = new TextEncoder().encode(JSON.stringify(batch));
    const fromJson = readRecordMessage(bus.names, msg!.subject, undefined, other);
    expect(JSON.parse(`[${Buffer.from((fromJson.records as { json: Uint8Array }).json).toString()}]`)).toEqual(
      batch.records,
    );
    expect(recordsJsonOf(new TextEncoder().encode('{"records":[],"eos":true}'))).toBeUndefined();
    expect(readRecordBatchMeta(bus.names, msg!.subject, undefined)).toBeUndefined();
    // A message that says it holds a frame but does not is refused, saying why.
    const h = msg!.header;
    expect(() => readRecordMessage(bus.names, msg!.subject, h, other)).toThrow(/payload is not zstd/);
  });
});

describe('control', () => {
  it('carries a write to the link owner and its reply back; a bad request is refused by the helper', async () => {
    const target = { rig: 'rig1', link: 'ctl0' };
    const writes: Array<{ bytes: number[]; replyWindowMs: number }> = [];
    const server = serveControl(bus, target, {
      write: async ({ bytes, replyWindowMs }) => {
        writes.push({ bytes: [...bytes], replyWindowMs });
        if (bytes[0] === 0xff) throw new Error('the target is not connected');
        return { written: bytes.length, session: 's9' };
      },
      newSession: async (reason) => `s10 (${reason})`,
    });
    try {
      const reply = await requestControl(bus, target, { bytes: new Uint8Array([1, 2, 3]), replyWindowMs: 50 }, 2000);
      expect(reply).toEqual({ ok: true, written: 3, session: 's9' });
      expect(writes).toEqual([{ bytes: [1, 2, 3], replyWindowMs: 50 }]);
      const failed = await requestControl(bus, target, { bytes: new Uint8Array([0xff]) }, 2000);
      expect(failed).toEqual({ ok: false, written: 0, error: 'the target is not connected' });
      const tooLong = await requestControl(bus, target, { bytes: new Uint8Array(MAX_CONTROL_BYTES + 1) }, 2000);
      expect(tooLong.ok).toBe(false);
      expect(tooLong.error).toMatch(/bytes must be 1\.\.65536 long/);
      expect(writes).toHaveLength(2);
      const renewed = await requestControl(bus, target, { newSession: 'settings changed' }, 2000);
      expect(renewed).toEqual({ ok: true, written: 0, session: 's10 (settings changed)' });
    } finally {
      server.stop();
    }
  });

  it('carries QS commands with their answer, the control state, front-end release and the connection; a missing handler refuses', async () => {
    const target = { rig: 'rig1', link: 'ctl1' };
    const asked: unknown[] = [];
    const server = serveControl(bus, target, {
      write: async () => ({ written: 0 }),
      qs: async (request) => {
        asked.push(request);
        if (request.qs.command === 'poke') throw Object.assign(new Error('qs.size: 1, 2 or 4'), { field: 'qs.size' });
        return { ok: false, written: 4, session: 's1', result: { outcome: 'error' }, error: 'Trg-ERR' };
      },
      status: async () => ({ session: 's1', status: { targetConnected: true } }),
      connection: async () => ({ session: 's1', connection }),
    });
    const connection = {
      source: { kind: 'tcp-listen', description: 'tcp-listen 0.0.0.0:6601', secondTarget: 'refuse' as const },
      target: { address: '10.0.0.7:40112', sinceMs: 1_764_000_000_000 },
      notTaken: { refused: 2, replaced: 0, idleClosed: 1 },
    };
    try {
      const answered = await requestControl(bus, target, { qs: { command: 'tick' }, answerTimeoutMs: 999_999 }, 2000);
      expect(answered).toEqual({
        ok: false,
        written: 4,
        session: 's1',
        result: { outcome: 'error' },
        error: 'Trg-ERR',
      });
      const refused = await requestControl(bus, target, { qs: { command: 'poke' }, sizes: { objPtrSize: 4 } }, 2000);
      expect(refused).toEqual({ ok: false, written: 0, error: 'qs.size: 1, 2 or 4', field: 'qs.size' });
      expect(asked).toEqual([
        { qs: { command: 'tick' }, answerTimeoutMs: MAX_ANSWER_TIMEOUT_MS, sizes: undefined },
        { qs: { command: 'poke' }, answerTimeoutMs: 1000, sizes: { objPtrSize: 4 } },
      ]);
      const status = await requestControl(bus, target, { status: true }, 2000);
      expect(status).toEqual({ ok: true, written: 0, session: 's1', status: { targetConnected: true } });
      const release = await requestControl(bus, target, { releaseFrontEnd: true }, 2000);
      expect(release).toMatchObject({ ok: false, written: 0, error: expect.stringMatching(/no QS control point/) });
      const connected = await requestControl(bus, target, { connection: true }, 2000);
      expect(connected).toEqual({ ok: true, written: 0, session: 's1', connection });
    } finally {
      server.stop();
    }
  });

  it('throws NoGatewayError when nothing serves the link', async () => {
    const target = { rig: 'rig1', link: 'nobody' };
    const error = await requestControl(bus, target, { bytes: new Uint8Array([1]) }, 2000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoGatewayError);
    expect((error as Error).message).toMatch(/no gateway serves link rig1\/nobody/);
  });

  it('throws ControlTimeoutError when the owner does not answer in time', async () => {
    const target = { rig: 'rig1', link: 'slow' };
    const sub = bus.nc.subscribe(bus.names.ctlSubject(target.rig, target.link), { callback: () => {} });
    try {
      const error = await requestControl(bus, target, { bytes: new Uint8Array([1]) }, 300).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ControlTimeoutError);
    } finally {
      sub.unsubscribe();
    }
  });
});

describe('connectBus', () => {
  it('fails fast with a clear message when the server is unreachable', async () => {
    const start = Date.now();
    await expect(connectBus({ url: 'nats://127.0.0.1:1', name: 'nowhere', timeoutMs: 1000 })).rejects.toThrow(
      /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: .*check NATS_URL/,
    );
    expect(Date.now() - start).toBeLessThan(5000);
  });
});

describe('topology buckets', () => {
  it('read leases and checkpoints from the leader: made without direct gets, and an older bucket is changed so', async () => {
    const { Kvm } = await import('@nats-io/kv');
    const made = await bus.jsm.streams.info(`KV_${bus.names.decoderStateBucket}`);
    expect(made.config.allow_direct).toBe(false);

    // A bucket made by an earlier version, with direct gets (the client's default).
    const older = await connectTestBus('busold');
    try {
      await new Kvm(older.js).create(older.names.leaseBucket, { history: 1, ttl: 1000 });
      expect((await older.jsm.streams.info(`KV_${older.names.leaseBucket}`)).config.allow_direct).toBe(true);
      await ensureTopology(older, { leaseTtlMs: 1000 });
      expect((await older.jsm.streams.info(`KV_${older.names.leaseBucket}`)).config.allow_direct).toBe(false);
      expect((await older.jsm.streams.info(`KV_${older.names.decoderStateBucket}`)).config.allow_direct).toBe(false);
    } finally {
      await closeTestBus(older);
    }
  });
});
