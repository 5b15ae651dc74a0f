import { type Kysely, Migrator, sql } from 'kysely';
import type { Database } from './database.js';
import { migrationProvider } from './migrations/index.js';
import { ensurePartitions } from './partitions.js';

/** Key of the session-level advisory lock that serialises schema changes across processes. */
const MIGRATION_LOCK_KEY = 0x7472_6163; // "trac"

export interface MigrateOptions {
  /** Daily partitions (record blocks, link bytes) to make ahead of today after migrating (default 7; 0 = none). */
  partitionDaysAhead?: number;
}

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly migration: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/**
 * Brings the schema up to the newest migration, then makes the daily partitions
 * from yesterday to `partitionDaysAhead` days ahead. Safe when several services start at
 * once: they queue on an advisory lock and the later ones find nothing to do.
 * Returns the names of the migrations it applied.
 */
export async function migrateToLatest(db: Kysely<Database>, opts: MigrateOptions = {}): Promise<string[]> {
  const daysAhead = opts.partitionDaysAhead ?? 7;
  return withMigrationLock(db, async (conn) => {
    const applied = await runMigrator(new Migrator({ db: conn, provider: migrationProvider }), 'up');
    if (daysAhead > 0) {
      await ensurePartitions(conn, { from: new Date(Date.now() - 86_400_000), daysAhead: daysAhead + 1 });
    }
    return applied;
  });
}

/** Undoes the newest applied migration; returns its name (empty when there was none). */
export async function migrateDown(db: Kysely<Database>): Promise<string[]> {
  return withMigrationLock(db, (conn) => runMigrator(new Migrator({ db: conn, provider: migrationProvider }), 'down'));
}

/** Undoes every applied migration, newest first. */
export async function migrateToNothing(db: Kysely<Database>): Promise<string[]> {
  const undone: string[] = [];
  for (;;) {
    const names = await migrateDown(db);
    if (names.length === 0) return undone;
    undone.push(...names);
  }
}

async function runMigrator(migrator: Migrator, direction: 'up' | 'down'): Promise<string[]> {
  const { error, results = [] } = direction === 'up' ? await migrator.migrateToLatest() : await migrator.migrateDown();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(
      failed ? `migration ${failed} (${direction}) failed: ${reason}` : `migrating ${direction} failed: ${reason}`,
      failed,
      { cause: error },
    );
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Runs `work` on one connection that holds the migration lock, so the lock needs no second
 * connection from the pool (a pool of one works too).
 */
async function withMigrationLock<T>(db: Kysely<Database>, work: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      return await work(conn);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn);
    }
  });
}
