import { mergeSummaries, type RecordsSummary, STATE_MACHINE_RECORD_NAMES } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import { unpackColumn, unpackMachines } from '../blocks/packed-column.js';
import { encodeJsonBlock, recordBlockJsonInside } from '../blocks/record-block.js';
import { decodeStoredDigest } from '../blocks/record-digest.js';
import type { Database, RecordBlockRow } from '../database.js';
import { insertRecordBlocks, MAX_BLOCK_SPAN_NS } from './record-blocks.js';

export interface CompactOptions {
  /** Blocks with fewer records than this are merged with their neighbours, up to this many. */
  targetRecords?: number;
  /** Only blocks whose latest record is older than this are touched (ms; a live session keeps writing). */
  minAgeMs?: number;
  /** Merges per call, at most (each in a transaction of its own, so a session's writer never waits long). */
  maxMerges?: number;
  /** zstd level of merged blocks (default: what storage writes, `RECORD_BLOCK_LEVEL`). */
  level?: number;
  now?: Date;
}

export interface CompactResult {
  sessions: number;
  /** Blocks merged away, and blocks written in their place. */
  blocksBefore: number;
  blocksAfter: number;
}

type SummaryColumns = Omit<RecordBlockRow, 'id' | 'codec' | 'byte_count' | 'data' | 'host_time'>;

/** A stored block's summary row in the form summaries merge in (dictionary entries were stored apart). */
function summaryOfRow(b: SummaryColumns): RecordsSummary {
  return {
    firstSeq: Number(b.first_seq),
    lastSeq: Number(b.last_seq),
    recordCount: b.record_count,
    minHostNs: b.min_host_ns.toString(),
    maxHostNs: b.max_host_ns.toString(),
    minTargetTs: b.min_target_ts,
    maxTargetTs: b.max_target_ts,
    firstChunk: b.first_chunk,
    lastChunk: b.last_chunk,
    errorCount: b.error_count,
    gapCount: b.gap_count,
    lostBytes: Number(b.lost_bytes),
    names: b.names,
    kinds: b.kinds,
    types: b.types,
    objs: b.objs,
    sigs: b.sigs,
    prios: b.prios,
    channels: b.channels,
    states: b.states,
    dictionary: [],
    digest: b.digest ? decodeStoredDigest(b.digest) : null,
    targetInfo: null,
    // Blocks written before their target index or tallies were kept merge into a block without them.
    target:
      b.target_index === null || b.target_lanes === null
        ? undefined
        : {
            lanes: b.target_lanes,
            firstSegment: b.target_first_segment,
            lastSegment: b.target_last_segment,
            minTime: b.min_target_time,
            maxTime: b.max_target_time,
            untimed: b.target_untimed ?? 0,
            index: unpackColumn(b.target_index).toString('base64'),
          },
    machines: b.machines ? unpackMachines(b.machines) : b.names.some((n) => QEP.has(n)) ? undefined : null,
  };
}

const QEP = new Set(STATE_MACHINE_RECORD_NAMES);

/**
 * Merges runs of small neighbouring blocks of a session into blocks of about `targetRecords`.
 * Storage writes a block per batch, which is small when a link is slow or a batch short;
 * merged, a block compresses better and costs one summary row instead of many. The records'
 * JSON is joined as it is (never parsed) and the summaries merged from the rows. Each merge
 * is one transaction under the session's write lock: readers see the old blocks or the new
 * one, never both or neither, and the session's writer waits for one merge at most.
 */
export async function compactRecordBlocks(db: Kysely<Database>, opts: CompactOptions = {}): Promise<CompactResult> {
  const target = opts.targetRecords ?? 2000;
  const cutoffNs = BigInt((opts.now ?? new Date()).getTime() - (opts.minAgeMs ?? 10_000)) * 1_000_000n;
  const maxMerges = opts.maxMerges ?? 50;
  const candidates = await db
    .selectFrom('record_blocks')
    .select('session')
    .where('record_count', '<', Math.floor(target / 2))
    .where('max_host_ns', '<', cutoffNs)
    .groupBy('session')
    .having(sql<boolean>`count(*) > 1`)
    .limit(maxMerges)
    .execute();
  const result: CompactResult = { sessions: 0, blocksBefore: 0, blocksAfter: 0 };
  for (const { session } of candidates) {
    const runs = await mergeableRuns(db, session, target, cutoffNs);
    if (runs.length > 0) result.sessions++;
    for (const ids of runs) {
      if (result.blocksAfter >= maxMerges) return result;
      const merged = await db.transaction().execute((trx) => mergeBlocks(trx, session, ids, opts.level));
      if (merged) {
        result.blocksBefore += ids.length;
        result.blocksAfter++;
      }
    }
  }
  return result;
}

/** Runs of neighbouring small, settled blocks of the session whose records fit one block (ids in seq order). */
async function mergeableRuns(
  db: Kysely<Database>,
  session: string,
  target: number,
  cutoffNs: bigint,
): Promise<bigint[][]> {
  const blocks = await db
    .selectFrom('record_blocks')
    .select(['id', 'first_seq', 'last_seq', 'record_count', 'min_host_ns', 'max_host_ns'])
    .where('session', '=', session)
    .orderBy('first_seq')
    .execute();
  const runs: bigint[][] = [];
  let run: typeof blocks = [];
  let records = 0;
  let low = 0n;
  let high = 0n;
  const close = () => {
    if (run.length > 1) runs.push(run.map((b) => b.id));
    run = [];
    records = 0;
  };
  for (const b of blocks) {
    if (b.record_count >= target || b.max_host_ns >= cutoffNs) {
      close();
      continue;
    }
    const span = (b.max_host_ns > high ? b.max_host_ns : high) - (b.min_host_ns < low ? b.min_host_ns : low);
    // Only blocks that follow each other seq for seq: a gap may still be filled by a late batch.
    const follows = run.length > 0 && b.first_seq === run[run.length - 1].last_seq + 1n;
    if (run.length > 0 && (!follows || records + b.record_count > target || span > MAX_BLOCK_SPAN_NS)) close();
    if (run.length === 0) {
      low = b.min_host_ns;
      high = b.max_host_ns;
    } else {
      if (b.min_host_ns < low) low = b.min_host_ns;
      if (b.max_host_ns > high) high = b.max_host_ns;
    }
    run.push(b);
    records += b.record_count;
  }
  close();
  return runs;
}

/** Replaces the blocks `ids` (neighbours, seq order) of a session by one; false when they changed meanwhile. */
async function mergeBlocks(trx: Kysely<Database>, session: string, ids: bigint[], level?: number): Promise<boolean> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`rec:${session}`}, 0))`.execute(trx);
  const blocks = await trx
    .selectFrom('record_blocks')
    .selectAll()
    .where('session', '=', session)
    .where('id', 'in', ids)
    .orderBy('first_seq')
    .execute();
  // Another storage merged or a re-decode replaced them since they were listed: leave it.
  if (blocks.length !== ids.length) return false;
  const summary = blocks.map(summaryOfRow).reduce(mergeSummaries);
  const first = blocks[0];
  const place = { session, rig: first.rig, link: first.link, protocol: first.protocol };
  const pieces = blocks.map((b) => recordBlockJsonInside(b.codec, b.data));
  await trx.deleteFrom('record_blocks').where('session', '=', session).where('id', 'in', ids).execute();
  await insertRecordBlocks(trx, [encodeJsonBlock(place, summary, pieces, level)]);
  return true;
}
