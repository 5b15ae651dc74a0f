import { type Kysely, sql } from 'kysely';

/**
 * PalmTrace Reporter endpoints shared by every API process, and the processes themselves.
 *
 * `reporter_endpoints`: one row per endpoint (its configuration as given), leased to the one
 * API process that serves it (`owner` until `lease_until`, renewed every tick). The owner
 * writes the endpoint's status with each renewal, so any process answers the same. An
 * endpoint whose lease ran out (its process died) is taken by another.
 *
 * `api_replicas`: each API process's heartbeat; the processes alive share the orphaned
 * endpoints among them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('reporter_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('config', 'api')`))
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('owner', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('status', 'jsonb')
    .addColumn('status_at', 'timestamptz')
    .execute();
  await db.schema
    .createTable('api_replicas')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('seen_until', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_replicas').execute();
  await db.schema.dropTable('reporter_endpoints').execute();
}
