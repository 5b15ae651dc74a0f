import type { Kysely } from 'kysely';

/**
 * `sessions.link_settings`: the link settings the gateway sent with the session's chunks
 * (`th-settings`: a link's address query in TRACEHUB_LINKS, `tracehub replay` flags). The
 * decoder service lays them over the link's stored settings; a re-decode of the session must
 * too, and the chunks' headers are not kept with their bytes. Null when none were sent (or the
 * session was stored before they were kept).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('link_settings', 'jsonb').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('link_settings').execute();
}
