import { type Kysely, sql } from 'kysely';

/**
 * The link's bytes, kept: every raw chunk a gateway published, in blocks of consecutive
 * chunks of one session, compressed (layout in `blocks/link-chunk-block.ts`). Partitioned by
 * the host time of a block's first chunk, like `records`, so retention drops whole days.
 * Sessions count what is stored of their link bytes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table link_chunks (
      session     text         not null,
      first_chunk integer      not null,
      last_chunk  integer      not null,
      host_time   timestamptz  not null,
      chunk_count integer      not null,
      byte_count  integer      not null,
      lost_bytes  bigint       not null,
      eos         boolean      not null,
      codec       smallint     not null,
      data        bytea        not null,
      constraint link_chunks_pkey primary key (session, first_chunk, host_time)
    ) partition by range (host_time)`.execute(db);
  // Compressed already: Postgres's own TOAST compression would only spend CPU on it.
  await sql`alter table link_chunks alter column data set storage external`.execute(db);
  await sql`create table link_chunks_default partition of link_chunks default`.execute(db);
  await db.schema
    .alterTable('sessions')
    .addColumn('link_chunks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('link_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('link_lost_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_chunks').execute();
  await db.schema
    .alterTable('sessions')
    .dropColumn('link_chunks')
    .dropColumn('link_bytes')
    .dropColumn('link_lost_bytes')
    .execute();
}
