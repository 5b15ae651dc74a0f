import { stateOf, type TraceRecord, targetEntryOf, targetTimeOf, trackOf, visitTargetIndex } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import { unpackColumn } from '../blocks/packed-column.js';
import type { Database } from '../database.js';
import { BLOCK_DATA_COLUMNS, blockRecords, type ScanBudget } from './block-reader.js';
import { inOneSnapshot } from './snapshot.js';

/** Summary rows read per statement. */
const ROWS_PER_ROUND = 256;
/** Blocks whose records are decoded per statement. */
const DATA_PER_ROUND = 16;

/** A window of one target segment, in ticks: `[fromTicks, toTicks)`, either end open. */
export interface TargetWindow {
  segment: number;
  fromTicks?: bigint;
  toTicks?: bigint;
}

/** Where a record lies on the target's clock, as a view on target time counts it. */
export interface TargetPoint {
  seq: number;
  track: string | null;
  error: boolean;
  /** -1: the record has no target time. */
  segment: number;
  /** Ticks (a double: exact below 2^53). */
  time: number;
}

interface IndexRow {
  id: bigint;
  first_seq: bigint;
  record_count: number;
  target_lanes: Array<string | null> | null;
  target_index: Buffer | null;
}

/**
 * The blocks of a session that may hold records of the window (all of them without one), in
 * seq order: their target index, or none for blocks written before blocks had one.
 */
function indexRows(db: Kysely<Database>, session: string, w: TargetWindow | undefined, after: bigint) {
  return db
    .selectFrom('record_blocks')
    .select(['id', 'first_seq', 'record_count', 'target_lanes', 'target_index'])
    .where('session', '=', session)
    .where('first_seq', '>', after)
    .$if(w !== undefined, (q) =>
      q.where((eb) => {
        const win = w as TargetWindow;
        const inTime = [eb('target_first_segment', '<>', eb.ref('target_last_segment'))];
        const bounds = [];
        if (win.toTicks !== undefined) bounds.push(eb('min_target_time', '<', win.toTicks.toString()));
        if (win.fromTicks !== undefined) bounds.push(eb('max_target_time', '>=', win.fromTicks.toString()));
        if (bounds.length > 0) inTime.push(eb.and(bounds));
        else inTime.push(eb.lit(true));
        return eb.or([
          eb('target_index', 'is', null),
          eb.and([
            eb('target_first_segment', '<=', win.segment),
            eb('target_last_segment', '>=', win.segment),
            eb.or(inTime),
          ]),
        ]);
      }),
    )
    .orderBy('first_seq')
    .limit(ROWS_PER_ROUND)
    .execute();
}

/** Visits a record's `TargetPoint` as arguments (a million objects cost more than their counting). */
export type TargetPointVisitor = (
  seq: number,
  track: string | null,
  error: boolean,
  segment: TargetPoint['segment'],
  time: number,
) => void;

/**
 * Gives `visit` every record of a session's blocks that may hold records of `w` (all, without
 * it) as a `TargetPoint`, in seq order, on one snapshot. Blocks with a target index are read
 * from it alone; the others (written before blocks had one) are decoded under `budget`.
 */
export async function forEachTargetPoint(
  db: Kysely<Database>,
  session: string,
  w: TargetWindow | undefined,
  budget: ScanBudget,
  visit: TargetPointVisitor,
): Promise<void> {
  await inOneSnapshot(db, async (snapshot) => {
    let after = -1n;
    for (;;) {
      const rows = await indexRows(snapshot, session, w, after);
      const unindexed: IndexRow[] = [];
      // Points of decoded blocks are given in seq order with the indexed ones: held until their turn.
      const flushUnindexed = async () => {
        for (let i = 0; i < unindexed.length; i += DATA_PER_ROUND) {
          const part = unindexed.slice(i, i + DATA_PER_ROUND);
          const data = await snapshot
            .selectFrom('record_blocks')
            .select(BLOCK_DATA_COLUMNS)
            .where(
              'id',
              'in',
              part.map((b) => b.id),
            )
            .orderBy('first_seq')
            .execute();
          for (const block of data) {
            for (const r of blockRecords(block, budget)) {
              const e = targetEntryOf(r, 0);
              visit(r.seq, trackOf(r), e.error, e.segment, Number(e.time));
            }
          }
        }
        unindexed.length = 0;
      };
      for (const row of rows) {
        const lanes = row.target_lanes;
        if (row.target_index === null || lanes === null) {
          unindexed.push(row);
          continue;
        }
        await flushUnindexed();
        let seq = Number(row.first_seq);
        visitTargetIndex(unpackColumn(row.target_index), (lane, error, segment, time) => {
          visit(seq++, lanes[lane] ?? null, error, segment, time);
        });
      }
      await flushUnindexed();
      if (rows.length < ROWS_PER_ROUND) return;
      after = rows[rows.length - 1].first_seq;
    }
  });
}

/** Records of a session by seq, decoded from the blocks that hold them (`seqs` ascending). */
export async function sessionRecordsAt(
  db: Kysely<Database>,
  session: string,
  seqs: readonly number[],
  budget: ScanBudget,
): Promise<TraceRecord[]> {
  if (seqs.length === 0) return [];
  const wanted = new Set(seqs);
  const out: TraceRecord[] = [];
  await inOneSnapshot(db, async (snapshot) => {
    // The blocks holding them: those whose seq range holds one of them.
    const ranges = await snapshot
      .selectFrom('record_blocks')
      .select(['id', 'first_seq', 'last_seq'])
      .where('session', '=', session)
      .where('last_seq', '>=', BigInt(seqs[0]))
      .where('first_seq', '<=', BigInt(seqs[seqs.length - 1]))
      .orderBy('first_seq')
      .execute();
    const ids: bigint[] = [];
    let s = 0;
    for (const b of ranges) {
      while (s < seqs.length && seqs[s] < Number(b.first_seq)) s++;
      if (s < seqs.length && seqs[s] <= Number(b.last_seq)) ids.push(b.id);
    }
    for (let i = 0; i < ids.length; i += DATA_PER_ROUND) {
      const blocks = await snapshot
        .selectFrom('record_blocks')
        .select(BLOCK_DATA_COLUMNS)
        .where('id', 'in', ids.slice(i, i + DATA_PER_ROUND))
        .orderBy('first_seq')
        .execute();
      for (const block of blocks) for (const r of blockRecords(block, budget)) if (wanted.has(r.seq)) out.push(r);
    }
  });
  return out;
}

export interface TargetTimelineOptions extends TargetWindow {
  /** Equal slices of the window to count records in. */
  buckets: number;
  /** A window of at most this many records comes with the records themselves. */
  detail: number;
  budget: ScanBudget;
}

export interface TargetLaneCounts {
  track: string | null;
  records: number;
  errors: number;
  /** Slices holding records, in order. */
  buckets: Array<{ bucket: number; records: number; errors: number }>;
}

export interface TargetTimelineItem {
  track: string | null;
  seq: number;
  targetTicks: string;
  hostNs: string;
  kind: string;
  name: string;
  sig: string | null;
  /** The state a transition record enters. */
  state: string | null;
  text: string;
}

export interface TargetTimeline {
  segment: number;
  /** The window in ticks (without one given: the segment's first record to just after its last); null when the segment has no record. */
  fromTicks: bigint | null;
  toTicks: bigint | null;
  bucketTicks: bigint;
  /** Records and errors of the window. */
  records: number;
  errors: number;
  lanes: TargetLaneCounts[];
  /** The window's records, when there are at most `detail` of them (else null). */
  items: TargetTimelineItem[] | null;
}

/**
 * A timeline of one target segment of a session: per lane (QS active object, STP
 * master/channel, or the link), records and errors in each of `buckets` equal slices of the
 * window, counted exactly from the blocks' target indexes (only the blocks whose target time
 * overlaps the window are read), and the records themselves when the window holds at most
 * `detail`.
 */
export async function sessionTargetTimeline(
  db: Kysely<Database>,
  session: string,
  options: TargetTimelineOptions,
): Promise<TargetTimeline> {
  const { segment, buckets, detail, budget } = options;
  const from = options.fromTicks === undefined ? undefined : Number(options.fromTicks);
  const to = options.toTicks === undefined ? undefined : Number(options.toTicks);
  // The window's points, as parallel columns (a million points cost 20 MB, not 100 as objects).
  let n = 0;
  let seqs = new Float64Array(1 << 12);
  let times = new Float64Array(1 << 12);
  let lanes = new Int32Array(1 << 12);
  let errorsAt = new Uint8Array(1 << 12);
  const trackIds = new Map<string | null, number>();
  const tracks: Array<string | null> = [];
  await forEachTargetPoint(
    db,
    session,
    { segment, fromTicks: options.fromTicks, toTicks: options.toTicks },
    budget,
    (seq, track, error, pointSegment, time) => {
      if (pointSegment !== segment || (from !== undefined && time < from) || (to !== undefined && time >= to)) return;
      if (n === seqs.length) {
        const grow = <T extends Float64Array | Int32Array | Uint8Array>(a: T, make: (l: number) => T): T => {
          const b = make(a.length * 2);
          b.set(a);
          return b;
        };
        seqs = grow(seqs, (l) => new Float64Array(l));
        times = grow(times, (l) => new Float64Array(l));
        lanes = grow(lanes, (l) => new Int32Array(l));
        errorsAt = grow(errorsAt, (l) => new Uint8Array(l));
      }
      let id = trackIds.get(track);
      if (id === undefined) {
        id = tracks.length;
        tracks.push(track);
        trackIds.set(track, id);
      }
      seqs[n] = seq;
      times[n] = time;
      lanes[n] = id;
      errorsAt[n] = error ? 1 : 0;
      n++;
    },
  );
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (times[i] < low) low = times[i];
    if (times[i] > high) high = times[i];
  }
  const fromTicks = options.fromTicks ?? (n === 0 ? null : BigInt(low));
  const toTicks = options.toTicks ?? (n === 0 ? null : BigInt(high) + 1n);
  if (fromTicks === null || toTicks === null) {
    return { segment, fromTicks, toTicks, bucketTicks: 1n, records: 0, errors: 0, lanes: [], items: null };
  }
  const span = toTicks - fromTicks;
  const bucketTicks = span <= 0n ? 1n : (span + BigInt(buckets) - 1n) / BigInt(buckets);
  const origin = Number(fromTicks);
  const width = Number(bucketTicks);
  // Per lane, records and errors per bucket (a time is before `toTicks`, so in the last bucket at most).
  const slices = Math.max(1, Math.ceil(Number(span) / width));
  const counts = tracks.map(() => ({ records: new Int32Array(slices), errors: new Int32Array(slices) }));
  const laneTotals = tracks.map(() => ({ records: 0, errors: 0 }));
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const bucket = Math.min(slices - 1, Math.floor((times[i] - origin) / width));
    const lane = lanes[i];
    counts[lane].records[bucket]++;
    laneTotals[lane].records++;
    if (errorsAt[i]) {
      counts[lane].errors[bucket]++;
      laneTotals[lane].errors++;
      errors++;
    }
  }
  const slicesOf = ({ records, errors }: { records: Int32Array; errors: Int32Array }) => {
    const out: TargetLaneCounts['buckets'] = [];
    for (let b = 0; b < records.length; b++)
      if (records[b] > 0) out.push({ bucket: b, records: records[b], errors: errors[b] });
    return out;
  };
  let items: TargetTimelineItem[] | null = null;
  if (n <= detail) {
    const wanted = Array.from(seqs.subarray(0, n));
    items = (await sessionRecordsAt(db, session, wanted, budget)).map((r) => ({
      track: trackOf(r),
      seq: r.seq,
      targetTicks: targetTimeOf(r) ?? '0',
      hostNs: r.hostNs,
      kind: r.kind,
      name: r.name,
      sig: r.qs?.sig ?? null,
      state: stateOf(r),
      text: r.text,
    }));
  }
  return {
    segment,
    fromTicks,
    toTicks,
    bucketTicks,
    records: n,
    errors,
    lanes: tracks
      .map((track, i) => ({
        track,
        ...laneTotals[i],
        buckets: slicesOf(counts[i]),
      }))
      .sort((a, b) =>
        a.track === b.track ? 0 : a.track === null ? -1 : b.track === null ? 1 : a.track < b.track ? -1 : 1,
      ),
    items,
  };
}
