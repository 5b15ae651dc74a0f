import { type Kysely, sql } from 'kysely';

/**
 * The retention a deployment applies (storage's STORAGE_RETENTION_DAYS), as last applied:
 * one row, so that every reader (the API) can say how far back history goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table retention (
      singleton   boolean      primary key default true check (singleton),
      days        integer      not null,
      cutoff      timestamptz  not null,
      applied_at  timestamptz  not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('retention').execute();
}
