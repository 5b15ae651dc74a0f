import { type FreshDatabase, freshDatabase } from '@tracehub/tests/support';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Database, ensureTextIndexes, listPartitions, migrateToLatest } from '../src/index.js';

let fresh: FreshDatabase;
let db: Kysely<Database>;

beforeAll(async () => {
  fresh = await freshDatabase('textidx');
  db = createDb(fresh.url);
  await migrateToLatest(db);
});

afterAll(async () => {
  await db.destroy();
  await fresh.drop();
});

async function indexedPartitions(): Promise<string[]> {
  const { rows } = await sql<{ table: string }>`
    select tablename as table from pg_indexes where indexname like '%_text_trgm' order by tablename`.execute(db);
  return rows.map((r) => r.table);
}

describe('text indexes per partition', () => {
  it('are built only for closed days in closed mode, and for every partition in live mode', async () => {
    const partitions = await listPartitions(db);
    const now = new Date();
    const today = `records_p${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
    expect(partitions).toContain(today);
    expect(await indexedPartitions()).toEqual([]);

    const closed = await ensureTextIndexes(db, { mode: 'closed', now });
    expect(closed).toEqual(partitions.filter((p) => p < today));
    expect(closed.length).toBeGreaterThan(0);
    expect(await indexedPartitions()).toEqual(closed);
    expect(await ensureTextIndexes(db, { mode: 'closed', now })).toEqual([]);

    await ensureTextIndexes(db, { mode: 'live', now });
    expect(await indexedPartitions()).toEqual([...partitions, 'records_default'].sort());
  });

  it('serve substring search on an indexed partition', async () => {
    const yesterday = new Date(Date.now() - 86_400_000);
    const partition = `records_p${yesterday.toISOString().slice(0, 10).replaceAll('-', '')}`;
    const rows = await db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const plan = await sql<{ 'QUERY PLAN': string }>`
        explain select * from ${sql.table(partition)} where text ilike '%Philo_thinking%'`.execute(trx);
      return plan.rows;
    });
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/_text_trgm/);
  });
});
