import { plannedDatabase } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { createDb, type Database, type MigrateOptions, migrateToLatest } from '../src/index.js';

/**
 * The database of the test file that calls this at its top level: named after `label`, made and
 * migrated (with `options`) before the file's first test, dropped after its last, so no file
 * sees another's rows. The handle is returned at once (Kysely connects on its first query).
 */
export function migratedDatabaseForFile(label: string, options?: MigrateOptions): Kysely<Database> {
  const database = plannedDatabase(label);
  const db = createDb(database.url);
  beforeAll(async () => {
    await database.create();
    await migrateToLatest(db, options);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });
  return db;
}
