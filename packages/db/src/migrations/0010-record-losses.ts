import { type Kysely, sql } from 'kysely';

/**
 * Records a decoder published that storage could not store: Postgres refused them as data
 * (or they were not records at all). Storage then drops the message, but never in silence:
 * each drop is a row of `record_losses` (which chunk, which seqs, how many, why), and
 * `sessions.records_refused` counts them, so a session's stored records plus its refused ones
 * always make the total its decoder published.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('records_refused', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('record_losses')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('session', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('chunk', 'integer', (c) => c.notNull())
    .addColumn('first_seq', 'bigint')
    .addColumn('last_seq', 'bigint')
    .addColumn('records', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('lost_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('record_losses_session_idx').on('record_losses').columns(['session', 'chunk']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('record_losses').execute();
  await db.schema.alterTable('sessions').dropColumn('records_refused').execute();
}
