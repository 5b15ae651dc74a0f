import type { Kysely } from 'kysely';
import { type RecordRow, recordToRow } from '../blocks/record-row.js';
import type { Database, SessionRow } from '../database.js';
import { BLOCK_DATA_COLUMNS, blockRecords } from './block-reader.js';
import { inOneSnapshot } from './snapshot.js';

/** The newest session of a link (by start time), if it has any. */
export async function latestSession(db: Kysely<Database>, rig: string, link: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('rig', '=', rig)
    .where('link', '=', link)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function getSession(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** True when the session's end was stored and every one of its records with it. */
export function isSessionComplete(session: SessionRow): boolean {
  return session.ended_at !== null && session.record_total !== null && session.record_count === session.record_total;
}

/**
 * A page of a session's records in seq order, after `afterSeq` (keyset pagination), read on
 * one snapshot: a compaction between two rounds of block reads neither doubles nor drops.
 */
export async function sessionRecordsPage(
  db: Kysely<Database>,
  session: string,
  afterSeq: bigint | number,
  limit: number,
): Promise<RecordRow[]> {
  return inOneSnapshot(db, async (snapshot) => {
    const rows: RecordRow[] = [];
    // The seq of the last record taken: a block overlapping what was read gives only what follows.
    let last = Number(afterSeq);
    for (let round = 2; rows.length < limit; round = Math.min(round * 2, 32)) {
      const blocks = await blocksHoldingAfter(snapshot, session, last, round);
      for (const block of blocks) {
        for (const record of blockRecords(block)) {
          if (record.seq > last && rows.length < limit) {
            rows.push(recordToRow(record));
            last = record.seq;
          }
        }
      }
      if (blocks.length < round) break;
      last = Math.max(last, Number(blocks[blocks.length - 1].last_seq));
    }
    return rows;
  });
}

/** Up to `limit` of a session's blocks, in seq order, that hold a record after seq `after`. */
export function blocksHoldingAfter(db: Kysely<Database>, session: string, after: number, limit: number) {
  return db
    .selectFrom('record_blocks')
    .select([...BLOCK_DATA_COLUMNS, 'last_seq'])
    .where('session', '=', session)
    .where('last_seq', '>', BigInt(after))
    .orderBy('first_seq')
    .limit(limit)
    .execute();
}

/** Every record of a session in seq order (after `afterSeq`), a page at a time, without holding the whole session. */
export async function* sessionRecords(
  db: Kysely<Database>,
  session: string,
  pageSize = 5000,
  afterSeq: bigint = -1n,
): AsyncGenerator<RecordRow> {
  let after = afterSeq;
  for (;;) {
    const page = await sessionRecordsPage(db, session, after, pageSize);
    for (const row of page) yield row;
    if (page.length < pageSize) return;
    after = page[page.length - 1].seq;
  }
}
