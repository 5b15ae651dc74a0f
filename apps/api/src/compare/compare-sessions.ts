import type { CompareResult } from '@tracehub/api-contract';
import { stateOf, type TraceRecord } from '@tracehub/contracts';
import {
  type Database,
  forEachSessionRecord,
  rowToTraceRecord,
  type ScanBudget,
  sessionRecordsPage,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { sessionRecordHash } from '../watch/alert-view.js';

/** An object or signal that is a target address: it differs between builds, so it is compared as one. */
const ADDRESS = /^(0x)?[0-9a-f]{6,16}$/i;
const unaddressed = (s: string | undefined) => (s === undefined ? '' : ADDRESS.test(s) ? '(address)' : s);

/** Where a record comes from: its active object (QS) or master/channel (STP), '' for neither. */
export function sourceOf(r: TraceRecord): string {
  if (r.stp) return `M${r.stp.master}/C${r.stp.channel}`;
  return unaddressed(r.qs?.obj);
}

/** The records two runs are aligned by: the trace's own, not dictionaries, target info or decoder notices. */
const isAligned = (r: TraceRecord) => r.kind === 'record';

/** What two aligned records must share: name, object, signal, source, and the state a transition enters. */
const alignmentKey = (r: TraceRecord) =>
  [r.name, unaddressed(r.qs?.obj), unaddressed(r.qs?.sig), sourceOf(r), unaddressed(stateOf(r) ?? undefined)].join(
    '\u0000',
  );

/** One session read for comparison: counts per source and name, and its aligned sequence as ids. */
interface SessionDigest {
  records: number;
  counts: Map<string, number>;
  /** Each aligned record's key (name, object, signal) as a number from `keys`, and its seq. */
  sequence: number[];
  seqs: number[];
}

/** Keys shared by both sessions' digests, so that the sequences compare as numbers. */
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

async function digest(db: Kysely<Database>, session: string, keys: KeyIds, budget: ScanBudget): Promise<SessionDigest> {
  const d: SessionDigest = { records: 0, counts: new Map(), sequence: [], seqs: [] };
  await forEachSessionRecord(db, session, budget, (r) => {
    d.records++;
    const countKey = `${sourceOf(r)}\u0000${r.name}`;
    d.counts.set(countKey, (d.counts.get(countKey) ?? 0) + 1);
    if (!isAligned(r)) return;
    d.sequence.push(keys.of(alignmentKey(r)));
    d.seqs.push(r.seq);
  });
  return d;
}

async function recordAt(db: Kysely<Database>, session: string, seq: number | undefined) {
  if (seq === undefined) return null;
  const [row] = await sessionRecordsPage(db, session, seq - 1, 1);
  if (!row) return null;
  const r = rowToTraceRecord(row);
  return { seq: r.seq, name: r.name, source: sourceOf(r), signal: unaddressed(r.qs?.sig), text: r.text };
}

/**
 * Two sessions side by side: per source (active object, STP master/channel) the count of each
 * record name in both and the difference; and the two sequences of trace records aligned by
 * name, object and signal (timestamps and target addresses left out, as they differ between
 * builds), with the first place they differ.
 */
export async function compareSessions(
  db: Kysely<Database>,
  a: string,
  b: string,
  budget: ScanBudget,
  dashboardBase = '',
): Promise<CompareResult> {
  const keys = new KeyIds();
  // Both read at once: one's blocks come from Postgres while the other's are parsed.
  const [da, db_] = await Promise.all([digest(db, a, keys, budget), digest(db, b, keys, budget)]);
  const countKeys = new Set([...da.counts.keys(), ...db_.counts.keys()]);
  const counts = [...countKeys]
    .map((key) => {
      const [source, name] = key.split('\u0000');
      const ca = da.counts.get(key) ?? 0;
      const cb = db_.counts.get(key) ?? 0;
      return { source, name, a: ca, b: cb, difference: cb - ca };
    })
    .sort((x, y) => x.source.localeCompare(y.source) || x.name.localeCompare(y.name));
  let index = 0;
  const shorter = Math.min(da.sequence.length, db_.sequence.length);
  while (index < shorter && da.sequence[index] === db_.sequence[index]) index++;
  const agree = index === da.sequence.length && index === db_.sequence.length;
  const link = (session: string, seq: number | undefined) =>
    seq === undefined ? null : `${dashboardBase}${sessionRecordHash(session, seq)}`;
  return {
    a,
    b,
    recordsA: da.records,
    recordsB: db_.records,
    counts,
    divergence: agree
      ? null
      : {
          index,
          a: await recordAt(db, a, da.seqs[index]),
          b: await recordAt(db, b, db_.seqs[index]),
          linkA: link(a, da.seqs[index]),
          linkB: link(b, db_.seqs[index]),
        },
  };
}
