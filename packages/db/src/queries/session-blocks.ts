import { digestRecords, type RecordsDigest, stateOf, type TraceRecord } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import { decodeStoredDigest } from '../blocks/record-digest.js';
import type { Database } from '../database.js';
import { BLOCK_DATA_COLUMNS, BLOCK_META_COLUMNS, blockRecords, type ScanBudget } from './block-reader.js';
import { inOneSnapshot } from './snapshot.js';

/** Blocks read per statement: enough to keep round trips few, few enough not to hold a big session's blocks at once. */
const BLOCKS_PER_ROUND = 32;

/** A round of a session's blocks after `after` (a first seq), with the columns their records are read from. */
const blocksAfter = (db: Kysely<Database>, session: string, after: bigint) =>
  db
    .selectFrom('record_blocks')
    .select(BLOCK_DATA_COLUMNS)
    .where('session', '=', session)
    .where('first_seq', '>', after);

export type SessionBlocksQuery = ReturnType<typeof blocksAfter>;

/**
 * Gives `visit` every record of a session's blocks, in seq order. The blocks are read a few
 * at a time on one snapshot, so a compaction meanwhile neither doubles nor drops records,
 * and each is decoded under `budget`. `narrow` leaves out the blocks whose summary says they
 * hold nothing the reader wants.
 */
export async function forEachSessionRecord(
  db: Kysely<Database>,
  session: string,
  budget: ScanBudget,
  visit: (r: TraceRecord) => void,
  narrow: (query: SessionBlocksQuery) => SessionBlocksQuery = (query) => query,
): Promise<void> {
  await inOneSnapshot(db, async (snapshot) => {
    let after = -1n;
    for (;;) {
      const blocks = await narrow(blocksAfter(snapshot, session, after))
        .orderBy('first_seq')
        .limit(BLOCKS_PER_ROUND)
        .execute();
      for (const block of blocks) for (const r of blockRecords(block, budget)) visit(r);
      if (blocks.length < BLOCKS_PER_ROUND) return;
      after = BigInt(blocks[blocks.length - 1].first_seq);
    }
  });
}

/** A block as a comparison reads it: where it starts, how many records it holds, and its digest. */
export interface SessionBlockDigest {
  firstSeq: number;
  recordCount: number;
  digest: RecordsDigest;
}

/**
 * Gives `visit` the digest (contracts' `RecordsDigest`) of each of a session's blocks, in seq
 * order, on one snapshot: the stored one, or, for a block written before blocks kept one, the
 * digest of its records, decoded under `budget` (the stored digests cost the budget nothing).
 * Returns how many blocks had to be decoded.
 */
export async function forEachSessionDigest(
  db: Kysely<Database>,
  session: string,
  budget: ScanBudget,
  visit: (block: SessionBlockDigest) => void,
): Promise<number> {
  let decoded = 0;
  await inOneSnapshot(db, async (snapshot) => {
    let after = -1n;
    for (;;) {
      const blocks = await snapshot
        .selectFrom('record_blocks')
        .select((eb) => [
          ...BLOCK_META_COLUMNS,
          'record_count',
          'digest',
          // The records only of a block without a digest.
          eb.case().when('digest', 'is', null).then(eb.ref('data')).end().as('data'),
        ])
        .where('session', '=', session)
        .where('first_seq', '>', after)
        .orderBy('first_seq')
        .limit(DIGESTS_PER_ROUND)
        .execute();
      for (const block of blocks) {
        let digest = block.digest ? decodeStoredDigest(block.digest) : null;
        if (!digest) {
          if (!block.data) throw new Error(`record block ${block.id} has neither a digest nor records`);
          digest = digestRecords(blockRecords({ ...block, data: block.data }, budget), stateOf);
          decoded++;
        }
        visit({ firstSeq: Number(block.first_seq), recordCount: block.record_count, digest });
      }
      if (blocks.length < DIGESTS_PER_ROUND) return;
      after = BigInt(blocks[blocks.length - 1].first_seq);
    }
  });
  return decoded;
}

/** Digests read per statement (a few kB each; a block without one brings its records). */
const DIGESTS_PER_ROUND = 64;
