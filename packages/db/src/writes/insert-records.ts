import type { TraceRecord } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { insertRecordsJson } from './insert-records-json.js';

/**
 * Inserts records and returns how many were new; idempotent on (session, seq, host_time).
 * The records go to Postgres as JSON through `insertRecordsJson`, the one insert path (storage
 * hands it the JSON it receives as it is). Dictionary entries of `dict` records are stored
 * too; session counts are left to the caller.
 */
export async function insertRecords(db: Kysely<Database>, records: readonly TraceRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  return (await insertRecordsJson(db, Buffer.from(JSON.stringify(records)))).inserted;
}

/** The `host_time` Postgres stores for a record's `hostNs`: the instant, truncated to the µs. */
export function hostTimeOf(hostNs: string): { date: Date; micros: bigint } {
  const micros = BigInt(hostNs) / 1000n;
  return { date: new Date(Number(micros / 1000n)), micros };
}
