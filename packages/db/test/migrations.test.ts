import { freshDatabase } from '@tracehub/tests/support';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb, listPartitions, migrateDown, migrateToLatest, migrations } from '../src/index.js';

async function tableNames(db: ReturnType<typeof createDb>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_name not like 'kysely_%' and table_name not like 'record\\_blocks\\_%'
      and table_name not like 'link_chunks_%'
    order by table_name`.execute(db);
  return rows.map((r) => r.name);
}

/** Every table of the newest schema, apart from partitions. */
const TABLES = [
  'alerts',
  'api_replicas',
  'dictionaries',
  'link_chunks',
  'link_settings_changes',
  'links',
  'record_blocks',
  'record_losses',
  'reporter_endpoints',
  'retention',
  'rigs',
  'sessions',
  'watch_rules',
];

describe('migrations', () => {
  it('go up and down on a fresh database, and up again', async () => {
    const fresh = await freshDatabase('dbmig');
    const db = createDb(fresh.url);
    try {
      expect(await migrateToLatest(db)).toEqual(Object.keys(migrations));
      expect(await tableNames(db)).toEqual(TABLES);
      // Yesterday, today and 7 days ahead.
      expect((await listPartitions(db)).length).toBe(9);
      expect(await migrateToLatest(db)).toEqual([]);

      // Down one migration at a time, newest first, until nothing is left.
      for (const name of Object.keys(migrations).reverse()) expect(await migrateDown(db)).toEqual([name]);
      expect(await tableNames(db)).toEqual([]);
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_class where relname like 'records%' or relname like 'record_blocks%' or relname like 'link_chunks%'`.execute(
        db,
      );
      expect(rows[0].n).toBe(0);
      expect(await migrateDown(db)).toEqual([]);

      expect(await migrateToLatest(db)).toEqual(Object.keys(migrations));
      expect(await tableNames(db)).toEqual(TABLES);
    } finally {
      await db.destroy();
      await fresh.drop();
    }
  });

  it('are applied once when several services start at the same moment', async () => {
    const fresh = await freshDatabase('dbmigrace');
    const dbs = [createDb(fresh.url), createDb(fresh.url), createDb(fresh.url, { maxConnections: 1 })];
    try {
      const applied = await Promise.all(dbs.map((db) => migrateToLatest(db)));
      expect(applied.flat()).toEqual(Object.keys(migrations));
      expect(await tableNames(dbs[0])).toEqual(TABLES);
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
      await fresh.drop();
    }
  });
});
