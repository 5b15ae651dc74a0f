import { type Bus, connectBus, ensureTopology, publishRecordBatch, removeTopology } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import { createDb, type Database, migrateToLatest } from '@tracehub/db';
import { type FreshDatabase, freshDatabase, natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
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
function record(session: string, seq: number, chunk: number, over: Partial<TraceRecord> = {}): TraceRecord {
  return {
    rig: 'rig9',
    link: 'uart1',
    session,
    seq,
    chunk,
    protocol: 'qs',
    hostNs: (T0 + BigInt(chunk) * 1_000_000n).toString(),
    targetTs: String(seq * 10),
    kind: 'record',
    type: 1,
    name: 'QS_QEP_STATE_ENTRY',
    fields: { n: seq },
    text: `line ${seq}`,
    raw: Buffer.from([seq & 0xff]).toString('base64'),
    ...over,
  };
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
    await publishRecordBatch(bus, batch(s, 3, [], true, 104));
    await waitUntil(async () => {
      const row = await db.selectFrom('sessions').selectAll().where('id', '=', s).executeTakeFirst();
      return row?.ended_at != null && Number(row.record_count) === 104;
    });
    await store.stop();
    const rows = await db
      .selectFrom('records')
      .select(['seq', 'text', 'kind', 'name', 'target_ts', 'raw', 'fields'])
      .where('session', '=', s)
      .orderBy('seq')
      .execute();
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 104 }, (_, i) => i));
    expect(rows[5].text).toBe('line 5');
    expect(Buffer.from(rows[5].raw as Uint8Array)).toEqual(Buffer.from([5]));
    const session = await db.selectFrom('sessions').selectAll().where('id', '=', s).executeTakeFirstOrThrow();
    expect(Number(session.record_count)).toBe(104);
    expect(Number(session.error_count)).toBe(2);
    expect(Number(session.gap_count)).toBe(1);
    expect(Number(session.lost_bytes)).toBe(40);
    expect(Number(session.record_total)).toBe(104);
    expect(session.last_chunk).toBe(3);
    expect(session.target_info).toMatchObject({ objPtrSize: 8 });
    expect(await db.selectFrom('rigs').select('name').execute()).toEqual([{ name: 'rig9' }]);
    expect(await db.selectFrom('links').select(['rig', 'name', 'protocol']).execute()).toEqual([
      { rig: 'rig9', name: 'uart1', protocol: 'qs' },
    ]);
    expect(await db.selectFrom('dictionaries').select(['kind', 'key', 'name']).execute()).toEqual([
      { kind: 'QS_OBJ_DICT', key: 'obj=0x1000', name: 'l_table' },
    ]);
  });

  it('holds records while Postgres refuses them and stores them once it accepts again', async () => {
    const s = 'sess-2';
    // This store's Postgres "is away": its database does not exist yet.
    const late = await freshDatabase('storagelate');
    await late.drop();
    const lateDb = createDb(late.url);
    const store = new RecordStore({ bus, db: lateDb, batchRecords: 10, batchMs: 20 });
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
    await new Promise((r) => setTimeout(r, 1500));
    expect(store.stats.failures).toBeGreaterThan(0);
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
    const count = await lateDb
      .selectFrom('records')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(30);
    await lateDb.destroy();
    await late.drop();
  }, 60_000);
});
