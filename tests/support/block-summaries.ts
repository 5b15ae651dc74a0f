// Record blocks as their summary rows alone, with counts and host-time spans a test chooses:
// what the `/rates` aggregate reads. Their data is empty; nothing that decodes blocks should
// be pointed at them.
import type { Database } from '@tracehub/db';
import type { Kysely } from 'kysely';

export interface BlockSummary {
  rig: string;
  link: string;
  /** Host time of the block's first and last record, ns since the epoch. */
  lo: bigint;
  hi: bigint;
  records: number;
  errors: number;
  gaps: number;
}

let nextSeq = 0;

/** Writes one summary row per block (session `<rig>-<link>`, seqs following each other). */
export async function storeBlockSummaries(db: Kysely<Database>, blocks: readonly BlockSummary[]): Promise<void> {
  for (const b of blocks) {
    const first = nextSeq;
    nextSeq += b.records;
    await db
      .insertInto('record_blocks')
      .values({
        session: `${b.rig}-${b.link}`,
        first_seq: first,
        last_seq: nextSeq - 1,
        host_time: new Date(Number(b.lo / 1_000_000n)),
        min_host_ns: b.lo,
        max_host_ns: b.hi,
        rig: b.rig,
        link: b.link,
        protocol: b.link.startsWith('stm') ? 'stp' : 'qs',
        record_count: b.records,
        min_target_ts: null,
        max_target_ts: null,
        first_chunk: 0,
        last_chunk: 0,
        error_count: b.errors,
        gap_count: b.gaps,
        lost_bytes: 0,
        names: [],
        kinds: [],
        types: [],
        objs: [],
        sigs: [],
        prios: [],
        channels: [],
        states: null,
        codec: 0,
        byte_count: 0,
        data: Buffer.alloc(0),
      })
      .execute();
  }
}

/**
 * What each bucket of a range should hold for one link: every block's counts times the share
 * of its span [lo, hi + 1 ns) inside the bucket, rounded to a thousandth. Buckets start at
 * `fromNs`, `widthNs` apart; the last ends at `toNs`.
 */
export function expectedRates(
  blocks: readonly BlockSummary[],
  rig: string,
  link: string,
  range: { fromNs: bigint; toNs: bigint; widthNs: bigint; buckets: number },
): { records: number[]; errors: number[]; gaps: number[]; recordsPerSecond: number[] } {
  const round = (n: number) => Math.round(n * 1000) / 1000;
  const out = {
    records: [] as number[],
    errors: [] as number[],
    gaps: [] as number[],
    recordsPerSecond: [] as number[],
  };
  for (let i = 0; i < range.buckets; i++) {
    const start = range.fromNs + BigInt(i) * range.widthNs;
    const end = start + range.widthNs < range.toNs ? start + range.widthNs : range.toNs;
    let records = 0;
    let errors = 0;
    let gaps = 0;
    for (const b of blocks) {
      if (b.rig !== rig || b.link !== link) continue;
      const lo = b.lo > start ? b.lo : start;
      const hi = b.hi + 1n < end ? b.hi + 1n : end;
      if (hi <= lo) continue;
      const share = Number(hi - lo) / Number(b.hi + 1n - b.lo);
      records += b.records * share;
      errors += b.errors * share;
      gaps += b.gaps * share;
    }
    out.records.push(round(records));
    out.errors.push(round(errors));
    out.gaps.push(round(gaps));
    out.recordsPerSecond.push(end > start ? round(round(records) / (Number(end - start) / 1e9)) : 0);
  }
  return out;
}
