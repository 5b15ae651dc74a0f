import type { ColumnType, Generated, Kysely, Selectable } from 'kysely';
import type { Database } from '../database.js';

/** The tables of watch rules and alerts (migration 0011), kept beside the rest of the schema. */
// A type, not an interface: Kysely's withTables wants an index signature.
export type WatchTables = {
  watch_rules: WatchRulesTable;
  alerts: AlertsTable;
};

type Json = Record<string, unknown>;
type Now = ColumnType<Date, Date | string | undefined, Date | string>;

export type WatchRulesTable = {
  id: string;
  name: string;
  scope: Json;
  condition: Json;
  webhooks: ColumnType<Json[], string | undefined, string>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  silenced_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Now;
  owner: ColumnType<string | null, string | null | undefined, string | null>;
  lease_until: ColumnType<Date | null, unknown, unknown>;
};

export type AlertsTable = {
  id: Generated<bigint>;
  rule_id: string;
  rig: string;
  link: string;
  state: 'firing' | 'resolved';
  summary: string;
  session: string | null;
  seq: ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
  cause_at: ColumnType<Date, Date | string, Date | string>;
  fired_at: Now;
  resolved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  acknowledged_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  acknowledged_by: ColumnType<string | null, string | null | undefined, string | null>;
};

export type WatchRuleRow = Selectable<WatchRulesTable>;
export type AlertRow = Selectable<AlertsTable>;
export type WatchDb = Kysely<Database & WatchTables>;

/** The database with the watch tables in view. */
export const watchDb = (db: Kysely<Database>): WatchDb => db.withTables<WatchTables>();
