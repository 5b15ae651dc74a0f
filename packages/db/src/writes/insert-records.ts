import type { TraceRecord } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { groupBySession, type StoreRecordsResult, storeRecords, storeRecordsJson } from './record-blocks.js';

/**
 * Stores records (any sessions) as blocks and returns how many were new; idempotent on
 * (session, seq). Dictionary entries of `dict` records are stored too; session counts are
 * left to the caller.
 */
export async function insertRecords(db: Kysely<Database>, records: readonly TraceRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  return (await storeRecords(db, groupBySession(records))).inserted;
}

/** Records given as one JSON array (as they travel on the bus), stored as `insertRecords` does. */
export async function insertRecordsJson(db: Kysely<Database>, recordsJson: Uint8Array): Promise<StoreRecordsResult> {
  return storeRecordsJson(db, recordsJson);
}
