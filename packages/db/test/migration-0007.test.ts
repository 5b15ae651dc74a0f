import type { TraceRecord } from '@tracehub/contracts';
import { freshDatabase } from '@tracehub/tests/support';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb, decodeRecordBlock } from '../src/index.js';
import { migrateTo, type Row0001, row0001 } from './older-schema.js';

const T0 = 1_764_000_000_000_000_000n;
const qs = (seq: number, name: string, more: Partial<TraceRecord>): TraceRecord => ({
  rig: 'rig1',
  link: 'uart0',
  session: 's-qs',
  seq,
  chunk: Math.floor(seq / 2),
  protocol: 'qs',
  hostNs: (T0 + BigInt(seq) * 1_000_000n).toString(),
  targetTs: null,
  kind: 'record',
  type: 10 + seq,
  name,
  fields: {},
  text: `${name} #${seq}`,
  raw: Buffer.from([seq, 0x7e]).toString('base64'),
  ...more,
});

/** Records of the 0001 schema, each kind of what a v1 summary counts. */
const QS_RECORDS: TraceRecord[] = [
  qs(0, 'QS_QEP_INIT_TRAN', { qs: { obj: 'l_philo' }, fields: { state: null, target: 'thinking' } }),
  qs(1, 'QS_QEP_TRAN', {
    qs: { obj: 'l_philo', sig: 'TIMEOUT_SIG', prio: 3 },
    targetTs: '1000',
    fields: { source: 'thinking', target: 'hungry' },
  }),
  qs(2, 'QS_ERROR', { kind: 'error', targetTs: '900', fields: { lostBytes: 7 } }),
  qs(3, 'SEQ_GAP', { kind: 'error', fields: { missed: 2 } }),
  // Past 57 bytes Postgres's base64 breaks lines; the stored record's has none.
  qs(4, 'PHILO_STAT', { qs: { obj: 'l_table' }, raw: Buffer.alloc(100, 0xa5).toString('base64') }),
];
const STP_RECORD: TraceRecord = {
  ...qs(0, 'STP_MESSAGE', { stp: { master: 16, channel: 2 } }),
  session: 's-stp',
  link: 'stm0',
  protocol: 'stp',
};

describe('migration 0007', () => {
  it('moves the records of the 0001 schema into v1 blocks with their summaries', async () => {
    const fresh = await freshDatabase('dbmig7');
    const db = createDb(fresh.url) as unknown as Kysely<unknown>;
    try {
      await migrateTo(db, '0006-retention');
      await (db as Kysely<{ records: Row0001 }>)
        .insertInto('records')
        .values([...QS_RECORDS, STP_RECORD].map(row0001))
        .execute();
      await migrateTo(db, '0007-record-blocks');

      const { rows } = await sql<
        Record<string, unknown> & {
          codec: number;
          data: Buffer;
          rig: string;
          link: string;
          session: string;
          protocol: 'qs' | 'stp';
        }
      >`
        select * from record_blocks order by session`.execute(db);
      expect(rows).toHaveLength(2);
      const [qsBlock, stpBlock] = rows;
      expect(decodeRecordBlock(qsBlock.codec, qsBlock.data, qsBlock)).toEqual(QS_RECORDS);
      expect(decodeRecordBlock(stpBlock.codec, stpBlock.data, stpBlock)).toEqual([STP_RECORD]);
      expect(qsBlock).toMatchObject({
        session: 's-qs',
        first_seq: 0n,
        last_seq: 4n,
        min_host_ns: T0,
        max_host_ns: T0 + 4_000_000n,
        rig: 'rig1',
        link: 'uart0',
        protocol: 'qs',
        record_count: 5,
        min_target_ts: '900',
        max_target_ts: '1000',
        first_chunk: 0,
        last_chunk: 2,
        error_count: 2,
        gap_count: 1,
        lost_bytes: 7n,
        names: ['QS_QEP_INIT_TRAN', 'QS_QEP_TRAN', 'QS_ERROR', 'SEQ_GAP', 'PHILO_STAT'],
        kinds: ['record', 'error'],
        types: [10, 11, 12, 13, 14],
        objs: ['l_philo', 'l_table'],
        sigs: ['TIMEOUT_SIG'],
        prios: [3],
        channels: [],
        states: { l_philo: { seq: 1, hostNs: (T0 + 1_000_000n).toString(), targetTs: '1000', state: 'hungry' } },
        byte_count: Buffer.byteLength(JSON.stringify(QS_RECORDS)),
      });
      expect(stpBlock).toMatchObject({ channels: ['16/2'], objs: [], states: null, error_count: 0, lost_bytes: 0n });
      expect(await sql`select 1 from pg_class where relname = 'records'`.execute(db)).toMatchObject({ rows: [] });
    } finally {
      await db.destroy();
      await fresh.drop();
    }
  });
});
