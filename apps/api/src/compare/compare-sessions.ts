import type { CompareResult } from '@tracehub/api-contract';
import { forEachDigestKey, isAlignedRecord, sourceOf, unaddressed } from '@tracehub/contracts';
import {
  type Database,
  forEachSessionDigest,
  rowToTraceRecord,
  type ScanBudget,
  type SessionBlockDigest,
  sessionRecordsPage,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { sessionRecordHash } from '../watch/alert-view.js';

/** Alignment keys shared by both sessions, so that the sequences compare as numbers. */
class KeyIds {
  private readonly ids = new Map<string, number>();
  of(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }
}

/** A growing array of key ids. */
class IdSequence {
  private ids = new Int32Array(1 << 16);
  length = 0;
  push(id: number): void {
    if (this.length === this.ids.length) {
      const bigger = new Int32Array(this.ids.length * 2);
      bigger.set(this.ids);
      this.ids = bigger;
    }
    this.ids[this.length++] = id;
  }
  view(): Int32Array {
    return this.ids.subarray(0, this.length);
  }
}

/** Where a block's trace records start in a session's aligned sequence. */
interface BlockStart {
  index: number;
  firstSeq: number;
}

/** One session read for comparison, from its blocks' digests: counts per source and name, and its aligned sequence as key ids. */
interface SessionDigest {
  records: number;
  counts: Map<string, { source: string; name: string; n: number }>;
  sequence: Int32Array;
  /** In sequence order. */
  blocks: BlockStart[];
}

async function readDigest(
  db: Kysely<Database>,
  session: string,
  keys: KeyIds,
  budget: ScanBudget,
): Promise<SessionDigest> {
  const counts: SessionDigest['counts'] = new Map();
  const sequence = new IdSequence();
  const blocks: BlockStart[] = [];
  let records = 0;
  await forEachSessionDigest(db, session, budget, ({ firstSeq, recordCount, digest }: SessionBlockDigest) => {
    records += recordCount;
    for (const [source, name, n] of digest.counts) {
      const key = `${source}\u0000${name}`;
      const seen = counts.get(key);
      if (seen) seen.n += n;
      else counts.set(key, { source, name, n });
    }
    blocks.push({ index: sequence.length, firstSeq });
    // The block's own key indices as ids shared by both sessions.
    const ids = digest.keys.map((key) => keys.of(key));
    forEachDigestKey(digest, (index) => sequence.push(ids[index]));
  });
  return { records, counts, sequence: sequence.view(), blocks };
}

/** The seq of a session's `index`-th trace record, `index` in its aligned sequence. */
async function alignedSeq(
  db: Kysely<Database>,
  session: string,
  blocks: readonly BlockStart[],
  index: number,
): Promise<number | undefined> {
  // The last block starting at or before the index.
  let lo = 0;
  let hi = blocks.length - 1;
  if (hi < 0 || index < blocks[0].index) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (blocks[mid].index <= index) lo = mid;
    else hi = mid - 1;
  }
  let skip = index - blocks[lo].index;
  let after = BigInt(blocks[lo].firstSeq - 1);
  // Read on from the block's first record (in pages: its trace records may follow later blocks' seqs).
  for (;;) {
    const rows = await sessionRecordsPage(db, session, after, 4000);
    for (const row of rows) {
      if (row.kind !== 'record') continue;
      if (skip === 0) return Number(row.seq);
      skip--;
    }
    if (rows.length < 4000) return undefined;
    after = rows[rows.length - 1].seq;
  }
}

async function recordAt(db: Kysely<Database>, session: string, seq: number | undefined) {
  if (seq === undefined) return null;
  const [row] = await sessionRecordsPage(db, session, seq - 1, 1);
  if (!row) return null;
  const r = rowToTraceRecord(row);
  if (!isAlignedRecord(r)) return null;
  return { seq: r.seq, name: r.name, source: sourceOf(r), signal: unaddressed(r.qs?.sig), text: r.text };
}

/** How many leading ids two sequences share. */
function commonPrefix(a: Int32Array, b: Int32Array): number {
  const shorter = Math.min(a.length, b.length);
  let index = 0;
  while (index < shorter && a[index] === b[index]) index++;
  return index;
}

/**
 * Two sessions side by side: per source (active object, STP master/channel) the count of each
 * record name in both and the difference; and the two sequences of trace records aligned by
 * name, object and signal (timestamps and target addresses left out, as they differ between
 * builds), with the first place they differ. Both are read from their blocks' digests (what
 * a comparison needs of each block, kept beside it); a block written before blocks kept one
 * is decoded instead, within `budget`.
 */
export async function compareSessions(
  db: Kysely<Database>,
  a: string,
  b: string,
  budget: ScanBudget,
  dashboardBase = '',
): Promise<CompareResult> {
  const keys = new KeyIds();
  const [da, db_] = await Promise.all([readDigest(db, a, keys, budget), readDigest(db, b, keys, budget)]);
  const counts = [...new Set([...da.counts.keys(), ...db_.counts.keys()])]
    .map((key) => {
      const { source, name } = (da.counts.get(key) ?? db_.counts.get(key))!;
      const ca = da.counts.get(key)?.n ?? 0;
      const cb = db_.counts.get(key)?.n ?? 0;
      return { source, name, a: ca, b: cb, difference: cb - ca };
    })
    .sort((x, y) => x.source.localeCompare(y.source) || x.name.localeCompare(y.name));
  const index = commonPrefix(da.sequence, db_.sequence);
  const agree = index === da.sequence.length && index === db_.sequence.length;
  if (agree) return { a, b, recordsA: da.records, recordsB: db_.records, counts, divergence: null };
  const [seqA, seqB] = await Promise.all([
    index < da.sequence.length ? alignedSeq(db, a, da.blocks, index) : undefined,
    index < db_.sequence.length ? alignedSeq(db, b, db_.blocks, index) : undefined,
  ]);
  const link = (session: string, seq: number | undefined) =>
    seq === undefined ? null : `${dashboardBase}${sessionRecordHash(session, seq)}`;
  return {
    a,
    b,
    recordsA: da.records,
    recordsB: db_.records,
    counts,
    divergence: {
      index,
      a: await recordAt(db, a, seqA),
      b: await recordAt(db, b, seqB),
      linkA: link(a, seqA),
      linkB: link(b, seqB),
    },
  };
}
