import { type Kysely, sql } from 'kysely';

/**
 * The first schema: rigs, links, sessions, dictionaries and the partitioned records table.
 * Daily partitions of `records` are made by `ensurePartitions`; the default partition
 * catches any row outside them so that no insert ever fails for a missing day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rigs')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('first_seen', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('links')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('rig', 'text', (c) => c.notNull().references('rigs.name').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addUniqueConstraint('links_rig_name_key', ['rig', 'name'])
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('rig', 'text', (c) => c.notNull())
    .addColumn('link', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .addColumn('last_chunk', 'integer', (c) => c.notNull().defaultTo(-1))
    .addColumn('record_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('error_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('gap_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lost_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('target_info', 'jsonb')
    .addColumn('first_host_time', 'timestamptz')
    .addColumn('last_host_time', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('sessions_rig_link_started_idx')
    .on('sessions')
    .columns(['rig', 'link', 'started_at'])
    .execute();

  await db.schema
    .createTable('dictionaries')
    .addColumn('session', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dictionaries_pkey', ['session', 'kind', 'key'])
    .execute();

  await createRecordsTable(db);

  // Text search: trigram GIN (serves ILIKE '%...%' and regex) when pg_trgm can be installed,
  // else a full-text index.
  if (await trigramAvailable(db)) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index records_text_trgm_idx on records using gin (text gin_trgm_ops)`.execute(db);
  } else {
    await sql`create index records_text_fts_idx on records using gin (to_tsvector('simple', text))`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // pg_trgm stays installed: other schemas of the database may use it.
  await db.schema.dropTable('records').execute();
  await db.schema.dropTable('dictionaries').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('links').execute();
  await db.schema.dropTable('rigs').execute();
}

async function trigramAvailable(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ available: boolean }>`
    select exists (select 1 from pg_available_extensions where name = 'pg_trgm') as available`.execute(db);
  return rows[0]?.available === true;
}

/**
 * The one-row-per-record table (until migration 0007 moved records into blocks), its default
 * partition and its two indexes; 0007's `down` makes it again. Kysely's builder has no
 * PARTITION BY, so the partitioned table is plain SQL.
 */
export async function createRecordsTable(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table records (
      session     text         not null,
      seq         bigint       not null,
      host_time   timestamptz  not null,
      host_ns     bigint       not null,
      rig         text         not null,
      link        text         not null,
      protocol    text         not null,
      chunk       integer      not null,
      target_ts   numeric(20,0),
      kind        text         not null,
      type        integer      not null,
      name        text         not null,
      qs_obj      text,
      qs_sig      text,
      qs_prio     integer,
      stp_master  integer,
      stp_channel integer,
      fields      jsonb        not null,
      text        text         not null,
      raw         bytea        not null,
      constraint records_pkey primary key (session, seq, host_time)
    ) partition by range (host_time)`.execute(db);
  await sql`create table records_default partition of records default`.execute(db);

  // The primary key (session, seq, host_time) already serves lookups by (session, seq):
  // they are its leading columns, so a second index on them would only slow inserts.
  await sql`create index records_rig_link_time_idx on records (rig, link, host_time)`.execute(db);
  await sql`create index records_name_time_idx on records (name, host_time)`.execute(db);
}
