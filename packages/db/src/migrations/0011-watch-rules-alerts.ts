import { type Kysely, sql } from 'kysely';

/**
 * Watch rules and the alerts they raise.
 *
 * `watch_rules`: one row per rule (its scope, condition and webhooks as given), leased to the
 * one API process that judges it, as the Reporter endpoints are (`owner` until
 * `lease_until`, renewed every tick): every process sees every live record, but only a
 * rule's owner judges it, so a rule fires once however many processes run.
 *
 * `alerts`: one row per firing, resolved in place when its condition clears. At most one
 * alert of a rule fires per link at a time (a partial unique index), which also keeps a
 * rule's alert single while its lease changes hands.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table watch_rules (
      id text primary key,
      name text not null,
      scope jsonb not null,
      condition jsonb not null,
      webhooks jsonb not null default '[]'::jsonb,
      enabled boolean not null default true,
      silenced_until timestamptz,
      created_at timestamptz not null default now(),
      owner text,
      lease_until timestamptz
    )`.execute(db);
  await sql`
    create table alerts (
      id bigserial primary key,
      rule_id text not null references watch_rules (id) on delete cascade,
      rig text not null,
      link text not null,
      state text not null check (state in ('firing', 'resolved')),
      summary text not null,
      session text,
      seq bigint,
      cause_at timestamptz not null,
      fired_at timestamptz not null default now(),
      resolved_at timestamptz,
      acknowledged_at timestamptz,
      acknowledged_by text
    )`.execute(db);
  await sql`create unique index alerts_one_firing_per_link on alerts (rule_id, rig, link) where state = 'firing'`.execute(
    db,
  );
  await sql`create index alerts_fired_at_idx on alerts (fired_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table alerts`.execute(db);
  await sql`drop table watch_rules`.execute(db);
}
