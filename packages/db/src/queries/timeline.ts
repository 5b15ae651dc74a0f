import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../database.js';

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

/** Records that move a state machine into a state (QS), and where that state is named. */
const STATE_ENTERING = ['QS_QEP_INIT_TRAN', 'QS_QEP_TRAN', 'QS_QEP_TRAN_HIST', 'QS_QEP_TRAN_EP', 'QS_QEP_TRAN_XP'];

const trackExpr: RawBuilder<string | null> = sql<string | null>`case
  when protocol = 'qs' and (name like 'QS\\_QEP\\_%' or name like 'QS\\_QF\\_ACTIVE\\_%') then qs_obj
  when protocol = 'qs' and name like 'QS\\_QF\\_TIMEEVT\\_%' then fields->>'ao'
  when stp_master is not null then 'master ' || stp_master || ' / channel ' || stp_channel
end`;

const stateExpr = sql<
  string | null
>`case when name = 'QS_QEP_INIT_TRAN' then coalesce(fields->>'state', fields->>'target') else fields->>'target' end`;

/** ns since the epoch as the timestamptz of the partition key, rounded down to its µs. */
const instant = (ns: bigint) =>
  sql`timestamptz 'epoch' + ${(ns / 1000n).toString()}::bigint * interval '1 microsecond'`;

function windowQuery(db: Kysely<Database>, w: TimelineWindow) {
  return db
    .selectFrom('records')
    .where('rig', '=', w.rig)
    .where('link', '=', w.link)
    .where('session', '=', w.session)
    .where(sql<boolean>`host_time >= ${instant(w.fromNs)}`)
    .where(sql<boolean>`host_time <= ${instant(w.toNs)}`)
    .where('host_ns', '>=', w.fromNs)
    .where('host_ns', '<', w.toNs);
}

/** Windows holding more records than this are counted from a sample of them. */
const EXACT_LIMIT = 100_000;
/** About how many records a sampled count reads (each a primary-key lookup, ~0.2 ms on 1.2 M stored records). */
const SAMPLE_SIZE = 2_000;

/** The first and last seq of the window (records of a session are in host-time order by seq). */
async function seqRange(db: Kysely<Database>, w: TimelineWindow): Promise<[bigint, bigint] | undefined> {
  const [first, last] = await Promise.all([
    windowQuery(db, w).select('seq').orderBy('host_time').orderBy('host_ns').orderBy('seq').limit(1).executeTakeFirst(),
    windowQuery(db, w)
      .select('seq')
      .orderBy('host_time', 'desc')
      .orderBy('host_ns', 'desc')
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst(),
  ]);
  return first && last ? [first.seq, last.seq] : undefined;
}

export interface TimelineCounts {
  buckets: TimelineBucket[];
  /** 1: every record was counted; n: every n-th record by seq was, and counts are scaled by n. */
  sampleEvery: number;
}

/**
 * Per track, records and errors in each of `buckets` equal slices of the window. A window of
 * more than 100 000 records is counted from every n-th record by seq (about 2 000 index
 * lookups, scaled back by n), so a whole long session costs what a short one does.
 */
export async function timelineBuckets(
  db: Kysely<Database>,
  w: TimelineWindow,
  buckets: number,
): Promise<TimelineCounts> {
  const width = (w.toNs - w.fromNs + BigInt(buckets) - 1n) / BigInt(buckets);
  const bucket = sql<number>`((host_ns - ${w.fromNs.toString()}::bigint) / ${width.toString()}::bigint)::int`;
  const range = await seqRange(db, w);
  if (!range) return { buckets: [], sampleEvery: 1 };
  const [first, last] = range;
  const total = Number(last - first) + 1;
  const every = total > EXACT_LIMIT ? Math.ceil(total / SAMPLE_SIZE) : 1;
  type CountRow = { track: string | null; bucket: number; records: string; errors: string };
  const rows: CountRow[] =
    every === 1
      ? await windowQuery(db, w)
          .select([
            trackExpr.as('track'),
            bucket.as('bucket'),
            sql<string>`count(*)`.as('records'),
            sql<string>`count(*) filter (where kind = 'error')`.as('errors'),
          ])
          .groupBy([sql`1`, sql`2`])
          .execute()
      : // One primary-key lookup per sampled seq (lateral: never a scan of the whole session).
        (
          await sql<CountRow>`select s.track, s.bucket, count(*) as records, count(*) filter (where s.kind = 'error') as errors
            from generate_series(${first.toString()}::bigint, ${last.toString()}::bigint, ${every}::bigint) as g(seq)
            cross join lateral (
              select ${trackExpr} as track, ${bucket} as bucket, kind from records
              where session = ${w.session} and seq = g.seq limit 1
            ) as s
            group by 1, 2`.execute(db)
        ).rows;
  return {
    buckets: rows
      .filter((r) => r.bucket >= 0 && r.bucket < buckets)
      .map((r) => ({
        track: r.track,
        bucket: r.bucket,
        records: Number(r.records) * every,
        errors: Number(r.errors) * every,
      })),
    sampleEvery: every,
  };
}

/** The window's records in host-time order, at most `limit` (one more tells that there are more). */
export async function timelineItems(db: Kysely<Database>, w: TimelineWindow, limit: number): Promise<TimelineItem[]> {
  const rows = await windowQuery(db, w)
    .where('kind', '!=', 'dict')
    .select([
      trackExpr.as('track'),
      'seq',
      'host_ns',
      'target_ts',
      'kind',
      'name',
      'qs_sig',
      sql<string | null>`case when name in (${sql.join(STATE_ENTERING)}) then ${stateExpr} end`.as('state'),
      'text',
    ])
    // host_time first: the (rig, link, host_time) index delivers that order, the rest is a small sort.
    .orderBy('host_time')
    .orderBy('host_ns')
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    track: r.track,
    seq: r.seq,
    hostNs: r.host_ns,
    targetTs: r.target_ts,
    kind: r.kind,
    name: r.name,
    sig: r.qs_sig,
    state: r.state,
    text: r.text,
  }));
}

/**
 * The state changes of the window (at most `limit`), preceded by the last one of each active
 * object before the window: enough to draw every state interval that overlaps it.
 */
export async function timelineStateChanges(
  db: Kysely<Database>,
  w: TimelineWindow,
  limit: number,
): Promise<TimelineStateChange[]> {
  const base = db
    .selectFrom('records')
    .where('rig', '=', w.rig)
    .where('link', '=', w.link)
    .where('session', '=', w.session)
    .where('name', 'in', STATE_ENTERING);
  const before = await base
    .where(sql<boolean>`host_time <= ${instant(w.fromNs)}`)
    .where('host_ns', '<', w.fromNs)
    .distinctOn('qs_obj')
    .select(['qs_obj', 'seq', 'host_ns', 'target_ts', stateExpr.as('state')])
    .orderBy('qs_obj')
    .orderBy('host_time', 'desc')
    .orderBy('host_ns', 'desc')
    .orderBy('seq', 'desc')
    .execute();
  const inside = await base
    .where(sql<boolean>`host_time >= ${instant(w.fromNs)}`)
    .where(sql<boolean>`host_time <= ${instant(w.toNs)}`)
    .where('host_ns', '>=', w.fromNs)
    .where('host_ns', '<', w.toNs)
    .select(['qs_obj', 'seq', 'host_ns', 'target_ts', stateExpr.as('state')])
    .orderBy('host_time')
    .orderBy('host_ns')
    .orderBy('seq')
    .limit(limit)
    .execute();
  return [...before.sort((a, b) => (a.host_ns < b.host_ns ? -1 : 1)), ...inside]
    .filter((r) => r.qs_obj !== null && r.state !== null)
    .map((r) => ({ track: r.qs_obj!, seq: r.seq, hostNs: r.host_ns, targetTs: r.target_ts, state: r.state! }));
}
