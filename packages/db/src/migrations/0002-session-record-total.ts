import type { Kysely } from 'kysely';

/**
 * `sessions.record_total`: how many records a session has in all, known once its end was
 * decoded. With it a reader can tell a completely stored session from one whose last batches
 * are still on their way (several storage workers may commit out of order).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('record_total', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('record_total').execute();
}
