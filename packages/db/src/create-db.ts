import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';

export interface CreateDbOptions {
  /** Most connections in the pool (default 10). */
  maxConnections?: number;
  /** Application name shown in pg_stat_activity. */
  applicationName?: string;
  /** How long to wait for a connection to the server before failing (default 5000 ms). */
  connectTimeoutMs?: number;
  /** Postgres stops any statement of this pool that runs longer (error 57014); default: no limit. */
  statementTimeoutMs?: number;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Type parsers of this pool only (pg's global `types` stay untouched): int8 becomes a JS
 * bigint, because host clocks in ns and 64-bit counters exceed 2^53; numeric stays a
 * decimal string, exact (target timestamps are numeric(20,0)).
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => BigInt(value);
    if (oid === NUMERIC_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** A Kysely instance over a pg Pool for `url`. Call `db.destroy()` to close the pool. */
export function createDb(url: string, opts: CreateDbOptions = {}): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.maxConnections ?? 10,
    application_name: opts.applicationName,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    types,
  });
  // An idle client that loses its server emits 'error' on the pool; without a listener that
  // would crash the process. The next query on the pool reports the problem instead.
  pool.on('error', () => {});
  // A client checked out (inside a transaction, between two statements) that loses its
  // server emits 'error' too, and the pool listens only to idle ones: without this, the
  // process would die of an unhandled 'error' event. The statement in flight, or the next,
  // fails instead, and the pool drops the broken client when it comes back.
  pool.on('connect', (client) => client.on('error', () => {}));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
