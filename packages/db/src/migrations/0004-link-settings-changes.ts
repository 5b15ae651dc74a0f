import { type Kysely, sql } from 'kysely';

/**
 * `link_settings_changes`: every change of a link's settings, with who made it, when, through
 * what (api, cli, dashboard) and whether it was to apply at once or from the next session.
 * `links.settings` stays the current document; this is its history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('link_settings_changes')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('link_id', 'integer', (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_by', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('applies', 'text', (c) => c.notNull().check(sql`applies in ('next-session', 'now')`))
    .addColumn('previous', 'jsonb', (c) => c.notNull())
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('link_settings_changes_by_link')
    .on('link_settings_changes')
    .columns(['link_id', 'changed_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_settings_changes').execute();
}
