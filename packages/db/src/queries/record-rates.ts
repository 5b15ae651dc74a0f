import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import { MAX_BLOCK_SPAN_NS } from '../writes/record-blocks.js';
import { instant } from './records-page.js';

/** A host-time range cut into equal buckets, for the links of a rig (or one link, or the fleet). */
export interface RecordRatesWindow {
  rig?: string;
  link?: string;
  /** Host time, ns since the epoch: [fromNs, toNs). */
  fromNs: bigint;
  toNs: bigint;
  buckets: number;
}

/** One link's records, error records and gaps in each bucket of a window (0 where it had none). */
export interface LinkRateSeries {
  rig: string;
  link: string;
  protocol: string;
  records: number[];
  errors: number[];
  gaps: number[];
}

/** The width of each bucket of a window, ns (the last one may be cut short at `toNs`). */
export function bucketWidthNs(w: Pick<RecordRatesWindow, 'fromNs' | 'toNs' | 'buckets'>): bigint {
  const buckets = BigInt(w.buckets);
  return (w.toNs - w.fromNs + buckets - 1n) / buckets;
}

/**
 * Records, error records and gaps per link and bucket of host time, from the block summary rows
 * alone: no block is read, so a window of weeks costs one index range scan of the summaries.
 *
 * A block's counts are spread over its host-time span [min_host_ns, max_host_ns + 1 ns), each
 * bucket taking the share of the span it overlaps. Counting a whole block in the bucket of its
 * middle would be simpler, but a block holds up to 4 000 records or an hour of host time, so a
 * slow link's block can span many buckets: it would draw as one spike and empty buckets around
 * it. Spread, the counts are exact wherever a link's rate is steady within a block and the
 * total over the window is exact for every block inside it; the price is fractional counts
 * (rounded to a thousandth here). A block that reaches past the window adds only the share
 * inside it.
 */
export async function recordRates(db: Kysely<Database>, w: RecordRatesWindow): Promise<LinkRateSeries[]> {
  const width = bucketWidthNs(w);
  const from = w.fromNs.toString();
  const to = w.toNs.toString();
  const step = width.toString();
  const rig = w.rig === undefined ? sql`true` : sql`rig = ${w.rig}`;
  const link = w.link === undefined ? sql`true` : sql`link = ${w.link}`;
  // host_time is min_host_ns to the µs, and no block spans more than MAX_BLOCK_SPAN_NS: both
  // bounds on it let Postgres skip the partitions outside the window.
  const query = sql<{
    rig: string;
    link: string;
    protocol: string;
    bucket: number;
    records: number;
    errors: number;
    gaps: number;
  }>`
    with blocks as (
      select rig, link, protocol, min_host_ns as lo, max_host_ns + 1 as hi, record_count, error_count, gap_count
      from record_blocks
      where ${rig} and ${link}
        and min_host_ns < ${to}::bigint and max_host_ns >= ${from}::bigint
        and host_time < ${instant(w.toNs + 1000n)}
        and host_time >= ${instant(w.fromNs - MAX_BLOCK_SPAN_NS - 1000n)}
    ),
    shares as (
      select b.rig, b.link, b.protocol, i as bucket,
        (least(b.hi, ${from}::bigint + (i + 1) * ${step}::bigint, ${to}::bigint)
          - greatest(b.lo, ${from}::bigint + i * ${step}::bigint))::float8 / (b.hi - b.lo) as share,
        b.record_count, b.error_count, b.gap_count
      from blocks b,
        generate_series(
          greatest(0, (b.lo - ${from}::bigint) / ${step}::bigint),
          least(${w.buckets - 1}::bigint, (b.hi - 1 - ${from}::bigint) / ${step}::bigint)
        ) as i
    )
    select rig, link, min(protocol) as protocol, bucket::int as bucket,
      round(sum(record_count * share)::numeric, 3)::float8 as records,
      round(sum(error_count * share)::numeric, 3)::float8 as errors,
      round(sum(gap_count * share)::numeric, 3)::float8 as gaps
    from shares
    where share > 0
    group by rig, link, bucket
    order by rig, link, bucket`;
  // Postgres guesses a thousand buckets per block (generate_series), so the plan looks costly
  // enough to compile with JIT, which takes longer than the query (~0.7 s against ~0.1 s over
  // 90 000 blocks): off for this statement.
  const { rows } = await db.transaction().execute(async (trx) => {
    await sql`set local jit = off`.execute(trx);
    return query.execute(trx);
  });
  const series: LinkRateSeries[] = [];
  let current: LinkRateSeries | undefined;
  for (const r of rows) {
    if (!current || current.rig !== r.rig || current.link !== r.link) {
      const zeros = () => new Array<number>(w.buckets).fill(0);
      current = { rig: r.rig, link: r.link, protocol: r.protocol, records: zeros(), errors: zeros(), gaps: zeros() };
      series.push(current);
    }
    current.records[r.bucket] = r.records;
    current.errors[r.bucket] = r.errors;
    current.gaps[r.bucket] = r.gaps;
  }
  return series;
}
