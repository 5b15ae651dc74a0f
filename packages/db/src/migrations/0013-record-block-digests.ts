import type { Kysely } from 'kysely';

/**
 * A record block keeps the digest two runs are compared by (contracts' `RecordsDigest`: its
 * records' counts by source and name, and its trace records as alignment keys), so that a
 * comparison reads digests instead of decoding every record. Blocks written before have none
 * (null) and are read record by record when compared. Stored compressed (`blocks/record-digest.ts`):
 * one or two characters a record compress to next to nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('record_blocks').addColumn('digest', 'bytea').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('record_blocks').dropColumn('digest').execute();
}
