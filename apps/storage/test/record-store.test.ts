import { headers as natsHeaders } from '@nats-io/transport-node';
import { type Bus, connectBus, ensureTopology, publishRecordBatch, removeTopology } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import { createDb, type Database, migrateToLatest, sessionRecordLosses, sessionRecordsPage } from '@tracehub/db';
import {
  type FreshDatabase,
  freshDatabase,
  natsUrl,
  transitionRecord,
  uniquePrefix,
  waitUntil,
} from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStore } from '../src/index.js';

let bus: Bus;
let fresh: FreshDatabase;
let db: Kysely<Database>;

beforeAll(async () => {
  bus = await connectBus({ url: natsUrl(), name: 'storage-test', prefix: uniquePrefix('st') });
  await ensureTopology(bus);
  fresh = await freshDatabase('storage');
  db = createDb(fresh.url);
  await migrateToLatest(db);
});

afterAll(async () => {
  await removeTopology(bus);
  await bus.close();
  await db.destroy();
  await fresh.drop();
});

const T0 = 1_795_000_000_000_000_000n;
/** A record of `session` in chunk `chunk`, with its text and its one raw byte made from `seq`. */
function record(session: string, seq: number, chunk: number, over: Partial<TraceRecord> = {}): TraceRecord {
  return transitionRecord({ rig: 'rig9', link: 'uart1', session }, seq, {
    chunk,
    hostNs: (T0 + BigInt(chunk) * 1_000_000n).toString(),
    text: `line ${seq}`,
    raw: Buffer.from([seq & 0xff]).toString('base64'),
    ...over,
  });
}
function batch(session: string, chunk: number, records: TraceRecord[], eos = false, total?: number): RecordBatch {
  const b: RecordBatch = {
    protocol: 'qs',
    rig: 'rig9',
    link: 'uart1',
    session,
    chunk,
    hostNs: (T0 + BigInt(chunk) * 1_000_000n).toString(),
    eos,
    records,
  };
  if (total !== undefined) b.sessionRecordCount = total;
  return b;
}

describe('RecordStore', () => {
  it('stores every record once, registers rig, link, session and dictionaries, and counts', async () => {
    const store = new RecordStore({ bus, db, batchRecords: 50, batchMs: 20 });
    await store.start();
    const s = 'sess-1';
    const chunk0 = [
      record(s, 0, 0, {
        kind: 'info',
        name: 'QS_TARGET_INFO',
        type: 64,
        fields: { objPtrSize: 8, reset: true },
        targetTs: null,
      }),
      record(s, 1, 0, { kind: 'dict', name: 'QS_OBJ_DICT', type: 61, fields: { obj: '0x1000', name: 'l_table' } }),
    ];
    // Entries keyed by their fields in their order; the same key again in one batch: the last wins.
    const chunk3 = [
      record(s, 104, 3, {
        kind: 'dict',
        name: 'QS_SIG_DICT',
        type: 60,
        fields: { sig: 4, obj: '0x0', name: 'OLD_SIG' },
      }),
      record(s, 105, 3, {
        kind: 'dict',
        name: 'QS_SIG_DICT',
        type: 60,
        fields: { sig: 4, obj: '0x0', name: 'EAT_SIG' },
      }),
    ];
    const chunk1 = Array.from({ length: 100 }, (_, i) => record(s, 2 + i, 1));
    const chunk2 = [
      record(s, 102, 2, { kind: 'error', name: 'SEQ_GAP', type: -2, fields: { lost: 3 } }),
      record(s, 103, 2, { kind: 'error', name: 'LINK_LOST', type: -3, fields: { lostBytes: 40 } }),
    ];
    await publishRecordBatch(bus, batch(s, 0, chunk0));
    await publishRecordBatch(bus, batch(s, 1, chunk1));
    // The same chunk's records again under another message id: a re-decode after a crash.
    await bus.js.publish(bus.names.recSubject('qs', 'rig9', 'uart1'), JSON.stringify(batch(s, 1, chunk1)), {
      msgID: 'again',
    });
    await publishRecordBatch(bus, batch(s, 2, chunk2));
    await publishRecordBatch(bus, batch(s, 3, chunk3));
    await publishRecordBatch(bus, batch(s, 4, [], true, 106));
    await waitUntil(async () => {
      const row = await db.selectFrom('sessions').selectAll().where('id', '=', s).executeTakeFirst();
      return row?.ended_at != null && Number(row.record_count) === 106;
    });
    await store.stop();
    const rows = await sessionRecordsPage(db, s, -1, 1_000_000);
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 106 }, (_, i) => i));
    expect(rows[5].text).toBe('line 5');
    expect(Buffer.from(rows[5].raw as Uint8Array)).toEqual(Buffer.from([5]));
    const session = await db.selectFrom('sessions').selectAll().where('id', '=', s).executeTakeFirstOrThrow();
    expect(Number(session.record_count)).toBe(106);
    expect(Number(session.error_count)).toBe(2);
    expect(Number(session.gap_count)).toBe(1);
    expect(Number(session.lost_bytes)).toBe(40);
    expect(Number(session.record_total)).toBe(106);
    expect(session.last_chunk).toBe(4);
    expect(session.first_host_time).toEqual(new Date(Number(T0 / 1_000_000n)));
    expect(session.last_host_time).toEqual(new Date(Number((T0 + 3_000_000n) / 1_000_000n)));
    expect(session.target_info).toMatchObject({ objPtrSize: 8 });
    expect(await db.selectFrom('rigs').select('name').execute()).toEqual([{ name: 'rig9' }]);
    expect(await db.selectFrom('links').select(['rig', 'name', 'protocol']).execute()).toEqual([
      { rig: 'rig9', name: 'uart1', protocol: 'qs' },
    ]);
    expect(await db.selectFrom('dictionaries').select(['kind', 'key', 'name']).orderBy('kind').execute()).toEqual([
      { kind: 'QS_OBJ_DICT', key: 'obj=0x1000', name: 'l_table' },
      { kind: 'QS_SIG_DICT', key: 'sig=4,obj=0x0', name: 'EAT_SIG' },
    ]);
  });

  it('drops only the messages Postgres refuses as data, keeps each as a record loss, and stores the rest of their batch', async () => {
    const s = 'sess-3';
    const subject = bus.names.recSubject('qs', 'rig9', 'uart1');
    const dropped: string[] = [];
    const log = { info() {}, warn() {}, error: (o: object, m: string) => dropped.push(`${m} ${JSON.stringify(o)}`) };
    const counted: Array<{ records: number; reason: string }> = [];
    const store = new RecordStore({
      bus,
      db,
      batchRecords: 1000,
      batchMs: 300,
      log,
      onDropped: (d) => counted.push(d),
    });
    await store.start();
    const headers = (chunk: number, records: number) => {
      const h = natsHeaders();
      h.set('th-session', s);
      h.set('th-chunk', String(chunk));
      h.set('th-recv-ns', (T0 + BigInt(chunk) * 1_000_000n).toString());
      h.set('th-records', String(records));
      return h;
    };
    await publishRecordBatch(bus, batch(s, 0, [record(s, 0, 0), record(s, 1, 0)]));
    // Not JSON at all, and no headers: never storable.
    await bus.js.publish(subject, 'not a record batch', { msgID: 'junk' });
    // Laid out like publishRecordBatch's payloads, but a record lacks its fields: refused as data.
    const { fields: _fields, ...noFields } = record(s, 2, 1);
    await bus.js.publish(subject, JSON.stringify({ ...batch(s, 1, []), records: [noFields] }), {
      msgID: 'no-fields',
      headers: headers(1, 1),
    });
    // Cut off inside the records array: bad JSON that only the writer's parse sees.
    await bus.js.publish(subject, `${JSON.stringify(batch(s, 2, [])).slice(0, -2)}{"seq":]}`, {
      msgID: 'bad-json',
      headers: headers(2, 1),
    });
    // Parsed, but without the envelope a record batch has (no host time): never storable.
    await bus.js.publish(subject, JSON.stringify({ session: s, chunk: 9, records: [record(s, 9, 9)] }), {
      msgID: 'no-host-time',
    });
    // Another publisher's layout (records first, no headers): read by parsing it.
    const { records: _r, ...envelope } = batch(s, 3, []);
    await bus.js.publish(subject, JSON.stringify({ records: [record(s, 3, 3), record(s, 4, 3)], ...envelope }), {
      msgID: 'records-first',
    });
    await publishRecordBatch(bus, batch(s, 4, [record(s, 5, 4)], true, 6));
    await waitUntil(async () => {
      const row = await db.selectFrom('sessions').selectAll().where('id', '=', s).executeTakeFirst();
      return row?.ended_at != null && Number(row.record_count) === 5 && dropped.length === 4;
    });
    await store.stop();
    const rows = await sessionRecordsPage(db, s, -1, 1_000_000);
    expect(rows.map((r) => Number(r.seq))).toEqual([0, 1, 3, 4, 5]);
    expect(dropped).toHaveLength(4);
    expect(dropped).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^unreadable record batch dropped .*is not valid JSON/),
        expect.stringMatching(/^unreadable record batch dropped .*no hostNs/),
        expect.stringMatching(
          /^record batch refused as data dropped \(kept as a record loss\) .*a record has no valid fields/,
        ),
        expect.stringMatching(
          /^record batch refused as data dropped \(kept as a record loss\) .*a record batch is not JSON/,
        ),
      ]),
    );
    // Every drop is counted; those of the session are kept as its losses, and with its stored
    // records they make the total its decoder published.
    expect(counted.sort((a, b) => a.reason.localeCompare(b.reason))).toEqual([
      { records: 1, reason: 'refused' },
      { records: 1, reason: 'refused' },
      { records: 1, reason: 'unreadable' },
      { records: 1, reason: 'unreadable' },
    ]);
    const losses = await sessionRecordLosses(db, s);
    expect(losses.map((l) => [l.chunk, l.records])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(losses[0].reason).toMatch(/a record has no valid fields/);
    const session = await db.selectFrom('sessions').selectAll().where('id', '=', s).executeTakeFirstOrThrow();
    // Five stored (seq 0, 1, 3, 4, 5), two refused (seq 2, and the cut-off message's one).
    expect([session.record_count, session.records_refused, session.record_total].map(Number)).toEqual([5, 2, 6]);
    // Terminated, not left to come back: nothing is pending on the consumer.
    const info = await bus.jsm.consumers.info(bus.names.recStream, bus.names.storageConsumer);
    expect(info.num_pending + info.num_ack_pending).toBe(0);
  });

  it('holds records while Postgres refuses them and stores them once it accepts again, logging the outage once', async () => {
    const s = 'sess-2';
    // This store's Postgres "is away": its database does not exist yet.
    const late = await freshDatabase('storagelate');
    await late.drop();
    const lateDb = createDb(late.url);
    const lines: Array<{ level: string; message: string }> = [];
    const log = {
      info: (_: object, message: string) => lines.push({ level: 'info', message }),
      warn: (_: object, message: string) => lines.push({ level: 'warn', message }),
      error: (_: object, message: string) => lines.push({ level: 'error', message }),
    };
    // An ack wait far shorter than the outage: held messages must still not come back.
    const store = new RecordStore({
      bus,
      db: lateDb,
      batchRecords: 10,
      batchMs: 20,
      ackWaitMs: 1000,
      log,
      failureSummaryMs: 1000,
    });
    await store.start();
    await publishRecordBatch(
      bus,
      batch(
        s,
        0,
        Array.from({ length: 30 }, (_, i) => record(s, i, 0)),
      ),
    );
    await publishRecordBatch(bus, batch(s, 1, [], true, 30));
    // The writes fail again and again (a retry each 0.2 s, then backing off): one line when it starts, then counts.
    await waitUntil(
      async () => lines.some((l) => / still failing \(\d+ more times in \d+ s\)/.test(l.message)),
      30_000,
    );
    expect(store.stats.failures).toBeGreaterThan(2);
    const outage = lines.filter((l) => l.message.startsWith('record batch write to Postgres'));
    expect(outage[0]).toEqual({
      level: 'error',
      message: expect.stringMatching(/^record batch write to Postgres: .*does not exist/),
    });
    expect(outage.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(outage.length).toBeLessThan(store.stats.failures);
    expect(store.stats.records).toBe(0);
    // Postgres "comes back": the database appears, with its schema.
    const admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
    await admin.query(`create database "${late.name}"`);
    await admin.end();
    const migrator = createDb(late.url);
    await migrateToLatest(migrator);
    await migrator.destroy();
    await waitUntil(async () => {
      const row = await lateDb
        .selectFrom('sessions')
        .selectAll()
        .where('id', '=', s)
        .executeTakeFirst()
        .catch(() => undefined);
      return row?.ended_at != null && Number(row.record_count) === 30;
    }, 30_000);
    await store.stop();
    expect(store.stats.redelivered).toBe(0);
    // The end of the outage: one line with the count, the last of the run.
    const recovered = lines.filter((l) => / works again after \d+ s \(\d+ failures\)/.test(l.message));
    expect(recovered.length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l.message.startsWith('record batch write to Postgres')).at(-1)).toBe(recovered.at(-1));
    const count = await lateDb
      .selectFrom('record_blocks')
      .select((eb) => eb.fn.sum<string>('record_count').as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(30);
    await lateDb.destroy();
    await late.drop();
  }, 60_000);
});
