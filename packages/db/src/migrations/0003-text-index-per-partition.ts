import { type Kysely, sql } from 'kysely';

/**
 * The text index moves from the partitioned parent (which forces it onto every partition,
 * maintained at every insert) to the partitions themselves, built by `ensureTextIndexes`
 * according to the installation's TextIndexMode. Dropping the parent index drops its
 * partition indexes with it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists records_text_trgm_idx`.execute(db);
  await sql`drop index if exists records_text_fts_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Partition indexes made by ensureTextIndexes go first; then the parent index as 0001 made it.
  const { rows } = await sql<{ name: string }>`
    select indexname as name from pg_indexes where tablename like 'records_%' and indexname like '%_text_trgm'`.execute(
    db,
  );
  for (const { name } of rows) await sql`drop index if exists ${sql.table(name)}`.execute(db);
  const { rows: ext } = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(db);
  if (ext[0].n > 0) await sql`create index records_text_trgm_idx on records using gin (text gin_trgm_ops)`.execute(db);
  else await sql`create index records_text_fts_idx on records using gin (to_tsvector('simple', text))`.execute(db);
}
