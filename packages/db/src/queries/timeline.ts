import type { TraceRecord } from '@tracehub/contracts';
import { stateOf, trackOf } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import type { Database, RecordBlockRow } from '../database.js';
import { blockRecords, type StoredBlockData } from './block-reader.js';
import { instant } from './records-page.js';
import { inOneSnapshot } from './snapshot.js';

/**
 * What a timeline draws, read from one link session's records in a host-time window:
 * per-track counts in time buckets when the window holds many records, the records
 * themselves when it holds few, and the state intervals of the active objects.
 *
 * A track is what a record belongs to on a timeline: its QS active object (QEP and active
 * object records by their object, time events by their active object), its STP master and
 * channel, or the link itself (null: user records, pools, errors, ...).
 */
export interface TimelineWindow {
  session: string;
  rig: string;
  link: string;
  /** Host time window, ns since the epoch: [fromNs, toNs). */
  fromNs: bigint;
  toNs: bigint;
}

export interface TimelineBucket {
  track: string | null;
  bucket: number;
  records: number;
  errors: number;
}

export interface TimelineItem {
  track: string | null;
  seq: bigint;
  hostNs: bigint;
  targetTs: string | null;
  kind: string;
  name: string;
  sig: string | null;
  /** The state a transition record enters. */
  state: string | null;
  text: string;
}

export interface TimelineStateChange {
  track: string;
  seq: bigint;
  hostNs: bigint;
  targetTs: string | null;
  state: string;
}

/** The track a record belongs to on a timeline (null: the link itself). */
export { trackOf };

/** The blocks of the window's link session (no column selected yet). */
function sessionBlocks(db: Kysely<Database>, w: TimelineWindow) {
  return db
    .selectFrom('record_blocks')
    .where('session', '=', w.session)
    .where('rig', '=', w.rig)
    .where('link', '=', w.link);
}

type WindowBlock = Pick<
  RecordBlockRow,
  'id' | 'session' | 'rig' | 'link' | 'protocol' | 'codec' | 'byte_count' | 'record_count' | 'first_seq'
>;

/**
 * The blocks of the session that may hold records of the window, in seq order: their summary
 * columns only. Their data is read apart (`withData`) for the blocks a view decodes: a sampled
 * or cut-off view of a long session reads a fraction of them.
 */
async function windowBlocks(
  db: Kysely<Database>,
  w: TimelineWindow,
  { withStates = false }: { withStates?: boolean } = {},
): Promise<WindowBlock[]> {
  let query = sessionBlocks(db, w)
    .select(['id', 'session', 'rig', 'link', 'protocol', 'codec', 'byte_count', 'record_count', 'first_seq'])
    .where('max_host_ns', '>=', w.fromNs)
    .where('min_host_ns', '<', w.toNs)
    .where('host_time', '<', instant(w.toNs + 1000n));
  // A block's summary names the last state of each object it changes (null: it changes none).
  if (withStates) query = query.where('states', 'is not', null);
  return query.orderBy('first_seq').execute();
}

/** Blocks read per statement when a view decodes blocks until it has enough. */
const DATA_BATCH = 8;

/**
 * The given blocks with their data, `DATA_BATCH` a statement, in the order given. Run on the
 * snapshot the blocks were listed on: a block compacted away meanwhile is still there.
 */
async function* withData(db: Kysely<Database>, blocks: readonly WindowBlock[]): AsyncGenerator<StoredBlockData> {
  for (let i = 0; i < blocks.length; i += DATA_BATCH) {
    const part = blocks.slice(i, i + DATA_BATCH);
    const rows = await db
      .selectFrom('record_blocks')
      .select(['id', 'data'])
      .where(
        'id',
        'in',
        part.map((b) => b.id),
      )
      .execute();
    const data = new Map(rows.map((r) => [r.id, r.data]));
    for (const b of part) {
      const bytes = data.get(b.id);
      if (bytes) yield { ...b, data: bytes };
    }
  }
}

const inWindow = (w: TimelineWindow) => (r: TraceRecord) => {
  const host = BigInt(r.hostNs);
  return host >= w.fromNs && host < w.toNs;
};

/** Windows holding more records than this are counted from a sample of their blocks. */
const EXACT_LIMIT = 20_000;

export interface TimelineCounts {
  buckets: TimelineBucket[];
  /** 1: every record was counted; n: the records of every n-th block were, and counts are scaled by n. */
  sampleEvery: number;
}

/**
 * Per track, records and errors in each of `buckets` equal slices of the window. A window of
 * more than 20 000 records is counted from every n-th block (counts scaled back by n), so a
 * whole long session costs about what a short one does.
 */
export async function timelineBuckets(
  db: Kysely<Database>,
  w: TimelineWindow,
  buckets: number,
): Promise<TimelineCounts> {
  const width = (w.toNs - w.fromNs + BigInt(buckets) - 1n) / BigInt(buckets);
  return inOneSnapshot(db, async (snapshot) => {
    const blocks = await windowBlocks(snapshot, w);
    const total = blocks.reduce((n, b) => n + b.record_count, 0);
    const every = total > EXACT_LIMIT ? Math.ceil(total / EXACT_LIMIT) : 1;
    const inside = inWindow(w);
    const counts = new Map<string, TimelineBucket>();
    const sampled = blocks.filter((_, i) => i % every === 0);
    for await (const block of withData(snapshot, sampled)) {
      for (const r of blockRecords(block)) {
        if (!inside(r)) continue;
        const track = trackOf(r);
        const bucket = Number((BigInt(r.hostNs) - w.fromNs) / width);
        if (bucket < 0 || bucket >= buckets) continue;
        const key = `${bucket}\u0000${track ?? ''}\u0000${track === null ? 0 : 1}`;
        let entry = counts.get(key);
        if (!entry) counts.set(key, (entry = { track, bucket, records: 0, errors: 0 }));
        entry.records += every;
        if (r.kind === 'error') entry.errors += every;
      }
    }
    return { buckets: [...counts.values()], sampleEvery: every };
  });
}

/**
 * Records the window surely holds, from the block summaries alone: those of the blocks wholly
 * inside it that hold no dictionary record (a timeline does not show those). A view that draws
 * at most N records one by one need not read the records of a window that surely holds more:
 * it counts them (`timelineBuckets`). For a whole session of 1.2 M records that read was a fifth
 * of the first answer's time.
 */
export async function timelineRecordsAtLeast(db: Kysely<Database>, w: TimelineWindow): Promise<number> {
  const row = await sessionBlocks(db, w)
    .select((eb) => eb.fn.sum<string | number | bigint | null>('record_count').as('records'))
    .where('min_host_ns', '>=', w.fromNs)
    .where('max_host_ns', '<', w.toNs)
    // host_time is the block's first record's host time: the partition key.
    .where('host_time', '>=', instant(w.fromNs - 1000n))
    .where('host_time', '<', instant(w.toNs + 1000n))
    .where((eb) => eb.not(eb(eb.val('dict'), '=', eb.fn.any('kinds'))))
    .executeTakeFirst();
  return Number(row?.records ?? 0);
}

/** The window's records in host-time order, at most `limit` (one more tells that there are more). */
export async function timelineItems(db: Kysely<Database>, w: TimelineWindow, limit: number): Promise<TimelineItem[]> {
  const inside = inWindow(w);
  const items: TimelineItem[] = [];
  await inOneSnapshot(db, async (snapshot) => {
    for await (const block of withData(snapshot, await windowBlocks(snapshot, w))) {
      for (const r of blockRecords(block)) {
        if (r.kind === 'dict' || !inside(r)) continue;
        items.push({
          track: trackOf(r),
          seq: BigInt(r.seq),
          hostNs: BigInt(r.hostNs),
          targetTs: r.targetTs,
          kind: r.kind,
          name: r.name,
          sig: r.qs?.sig ?? null,
          state: stateOf(r),
          text: r.text,
        });
      }
      // Records of a session come in host-time order by seq: once enough are in, later blocks add nothing earlier.
      if (items.length >= limit * 2) break;
    }
  });
  items.sort((a, b) => (a.hostNs < b.hostNs ? -1 : a.hostNs > b.hostNs ? 1 : Number(a.seq - b.seq)));
  return items.slice(0, limit);
}

/**
 * The state changes of the window (at most `limit`), preceded by the last one of each active
 * object before the window: enough to draw every state interval that overlaps it. The ones
 * before come from the block summaries (each block keeps the last state of each object), so
 * no earlier block is decoded.
 */
export async function timelineStateChanges(
  db: Kysely<Database>,
  w: TimelineWindow,
  limit: number,
): Promise<TimelineStateChange[]> {
  const latestBefore = new Map<string, TimelineStateChange>();
  const keep = (track: string, c: TimelineStateChange) => {
    const seen = latestBefore.get(track);
    if (!seen || seen.hostNs < c.hostNs || (seen.hostNs === c.hostNs && seen.seq < c.seq)) latestBefore.set(track, c);
  };
  const earlier = await sessionBlocks(db, w)
    .select(['states'])
    .where('max_host_ns', '<', w.fromNs)
    .where('states', 'is not', null)
    .execute();
  for (const { states } of earlier) {
    for (const [track, s] of Object.entries(states ?? {}))
      keep(track, { track, seq: BigInt(s.seq), hostNs: BigInt(s.hostNs), targetTs: s.targetTs, state: s.state });
  }
  const inside: TimelineStateChange[] = [];
  await inOneSnapshot(db, async (snapshot) => {
    for await (const block of withData(snapshot, await windowBlocks(snapshot, w, { withStates: true }))) {
      for (const r of blockRecords(block)) {
        const state = r.qs?.obj !== undefined ? stateOf(r) : null;
        if (state === null) continue;
        const change = { track: r.qs!.obj!, seq: BigInt(r.seq), hostNs: BigInt(r.hostNs), targetTs: r.targetTs, state };
        if (change.hostNs < w.fromNs) keep(change.track, change);
        else if (change.hostNs < w.toNs) inside.push(change);
      }
      // Blocks come in seq order, which is host-time order within a session: once `limit` changes
      // are in, later blocks hold only later ones, which are cut off below anyway. (Without this a
      // whole session of 1.2 M records was decoded to keep its first 5 000 changes: 5 s.)
      if (inside.length >= limit) break;
    }
  });
  inside.sort((a, b) => (a.hostNs < b.hostNs ? -1 : a.hostNs > b.hostNs ? 1 : Number(a.seq - b.seq)));
  return [...[...latestBefore.values()].sort((a, b) => (a.hostNs < b.hostNs ? -1 : 1)), ...inside.slice(0, limit)];
}
