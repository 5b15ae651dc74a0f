import { type TraceRecord, targetTimeOf } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { BLOCK_DATA_COLUMNS, blockRecords, type ScanBudget } from './block-reader.js';
import { inOneSnapshot } from './snapshot.js';
import { forEachTargetPoint, sessionRecordsAt } from './target-timeline.js';

/** Blocks read per statement (as the other session readers). */
const BLOCKS_PER_ROUND = 32;

/** One stretch of a session's target time: from its start or a target reset to the next reset or its end. */
export interface TargetSegment {
  segment: number;
  /** Records of the segment with a target time. */
  records: number;
  firstSeq: number;
  lastSeq: number;
  /** Target time (ticks) of the segment's first and last timed records. */
  firstTicks: string;
  lastTicks: string;
  firstHostNs: string;
  lastHostNs: string;
}

/**
 * The target segments of a session, from every record's `targetTime` (records stored without
 * one are counted in `untimed`). Reads the blocks' target indexes (decoding, within `budget`,
 * only blocks written before blocks had one) and the few blocks holding each segment's first
 * and last records, for their host times.
 */
export async function sessionTargetSegments(
  db: Kysely<Database>,
  session: string,
  options: { budget: ScanBudget },
): Promise<{ segments: TargetSegment[]; untimed: number }> {
  const segments: Array<Omit<TargetSegment, 'firstTicks' | 'lastTicks' | 'firstHostNs' | 'lastHostNs'>> = [];
  let untimed = 0;
  await forEachTargetPoint(db, session, undefined, options.budget, (seq, _track, _error, segment) => {
    if (segment < 0) {
      untimed++;
      return;
    }
    let s = segments[segments.length - 1];
    if (s === undefined || s.segment !== segment) {
      s = { segment, records: 0, firstSeq: seq, lastSeq: seq };
      segments.push(s);
    }
    s.records++;
    s.lastSeq = seq;
  });
  // Ticks and host times exactly as the records say them (an index's times are doubles).
  const ends = [...new Set(segments.flatMap((s) => [s.firstSeq, s.lastSeq]))].sort((a, b) => a - b);
  const bySeq = new Map((await sessionRecordsAt(db, session, ends, options.budget)).map((r) => [r.seq, r]));
  return {
    untimed,
    segments: segments.map((s) => {
      const first = bySeq.get(s.firstSeq)!;
      const last = bySeq.get(s.lastSeq)!;
      return {
        ...s,
        firstTicks: targetTimeOf(first)!,
        lastTicks: targetTimeOf(last)!,
        firstHostNs: first.hostNs,
        lastHostNs: last.hostNs,
      };
    }),
  };
}

export interface TargetWindowOptions {
  segment: number;
  /** Target time window in ticks, `[fromTicks, toTicks)`; either end may be open. */
  fromTicks?: bigint;
  toTicks?: bigint;
  /** Keyset: only records after this seq. */
  afterSeq?: number;
  limit: number;
  budget: ScanBudget;
}

/**
 * A page of a session's records in a window of target time of one segment, in seq order
 * (which is target-time order within a segment: its time only grows). Reads the session's
 * blocks in seq order from `afterSeq` and stops at the first record past the window, so a
 * window early in a session reads little, and skips the blocks before the window by their
 * target-time summary (migration 0012; blocks written before it are read).
 */
export async function sessionTargetWindow(
  db: Kysely<Database>,
  session: string,
  options: TargetWindowOptions,
): Promise<{ records: TraceRecord[]; more: boolean }> {
  const { segment, fromTicks, toTicks, limit, budget } = options;
  const records: TraceRecord[] = [];
  return inOneSnapshot(db, async (snapshot) => {
    let after = options.afterSeq ?? -1;
    for (;;) {
      const blocks = await blocksOfWindowAfter(snapshot, session, options, after);
      for (const block of blocks) {
        for (const r of blockRecords(block, budget)) {
          const ticks = targetTimeOf(r);
          if (r.seq <= after || ticks === undefined) continue;
          const s = r.targetSegment ?? 0;
          if (s < segment) continue;
          const t = BigInt(ticks);
          if (s > segment || (toTicks !== undefined && t >= toTicks)) return { records, more: false };
          if (fromTicks !== undefined && t < fromTicks) continue;
          if (records.length === limit) return { records, more: true };
          records.push(r);
        }
      }
      if (blocks.length < BLOCKS_PER_ROUND) return { records, more: false };
      after = Math.max(after, Number(blocks[blocks.length - 1].last_seq));
    }
  });
}

/**
 * Up to a round of a session's blocks after seq `after`, in seq order, leaving out those whose
 * summary says they end before the window: no timed record, all in earlier segments, or all in
 * the window's segment before its start.
 */
function blocksOfWindowAfter(
  db: Kysely<Database>,
  session: string,
  { segment, fromTicks }: Pick<TargetWindowOptions, 'segment' | 'fromTicks'>,
  after: number,
) {
  return db
    .selectFrom('record_blocks')
    .select([...BLOCK_DATA_COLUMNS, 'last_seq'])
    .where('session', '=', session)
    .where('last_seq', '>', BigInt(after))
    .where((eb) =>
      eb.or([
        eb('target_index', 'is', null),
        eb.and([
          eb('target_last_segment', '>=', segment),
          ...(fromTicks === undefined
            ? []
            : [
                eb.not(
                  eb.and([
                    eb('target_first_segment', '=', segment),
                    eb('target_last_segment', '=', segment),
                    eb('max_target_time', '<', fromTicks.toString()),
                  ]),
                ),
              ]),
        ]),
      ]),
    )
    .orderBy('first_seq')
    .limit(BLOCKS_PER_ROUND)
    .execute();
}
