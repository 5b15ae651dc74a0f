import { type Kysely, sql } from 'kysely';

/**
 * Watch rules and the alerts they raise.
 *
 * `watch_rules`: one row per rule (its scope, condition and webhooks as given), leased to the
 * one API process that evaluates it, as the Reporter endpoints are (`owner` until
 * `lease_until`, renewed every tick): every process sees every live record, but only a
 * rule's owner judges it, so a rule fires once however many processes run.
 *
 * `alerts`: one row per firing, resolved in place when its condition clears. At most one
 * alert of a rule fires per link at a time (a partial unique index), which also keeps a
 * rule's alert single while its lease changes hands.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('watch_rules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'jsonb', (c) => c.notNull())
    .addColumn('condition', 'jsonb', (c) => c.notNull())
    .addColumn('webhooks', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('silenced_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('owner', 'text')
    .addColumn('lease_until', 'timestamptz')
    .execute();
  await db.schema
    .createTable('alerts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('rule_id', 'text', (c) => c.notNull().references('watch_rules.id').onDelete('cascade'))
    .addColumn('rig', 'text', (c) => c.notNull())
    .addColumn('link', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('firing', 'resolved')`))
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('session', 'text')
    .addColumn('seq', 'bigint')
    .addColumn('cause_at', 'timestamptz', (c) => c.notNull())
    .addColumn('fired_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('acknowledged_at', 'timestamptz')
    .addColumn('acknowledged_by', 'text')
    .execute();
  await db.schema
    .createIndex('alerts_one_firing_per_link')
    .on('alerts')
    .columns(['rule_id', 'rig', 'link'])
    .unique()
    .where(sql.ref('state'), '=', 'firing')
    .execute();
  await db.schema.createIndex('alerts_fired_at_idx').on('alerts').column('fired_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alerts').execute();
  await db.schema.dropTable('watch_rules').execute();
}
