import { type TraceRecord, targetTimeOf } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import type { ScanBudget } from './block-reader.js';
import { forEachSessionRecord } from './session-blocks.js';

/** One value of a series: the record's seq, its target time (ticks) and the field's value. */
export interface SeriesPoint {
  seq: number;
  ticks: bigint;
  value: number;
}

export interface RecordSeriesOptions {
  /**
   * The series: each a record name (PHILO_STAT, a user record's dictionary name, STP_MESSAGE...)
   * and where the number is in its records' `fields`, a dotted path (`values.2` for a QS user
   * record's third argument).
   */
  series: ReadonlyArray<{ name: string; field: string }>;
  segment: number;
  /** Target-time window in ticks, `[fromTicks, toTicks)`; either end may be open. */
  fromTicks?: bigint;
  toTicks?: bigint;
  budget: ScanBudget;
}

/**
 * The values of numeric fields of records of a session over target time, one series per
 * name and field, each in seq order, read in one pass over the blocks whose summary names one
 * of the records. A record whose field is missing or not a number (a string that is not one, a
 * nested value) is counted in its series' `skipped`; 64-bit values (decimal strings) are taken
 * as the nearest double.
 */
export async function sessionRecordSeries(
  db: Kysely<Database>,
  session: string,
  { series, segment, fromTicks, toTicks, budget }: RecordSeriesOptions,
): Promise<Array<{ points: SeriesPoint[]; skipped: number }>> {
  const out = series.map(() => ({ points: [] as SeriesPoint[], skipped: 0 }));
  const byName = new Map<string, Array<{ path: string[]; into: (typeof out)[number] }>>();
  series.forEach((s, i) => {
    const wanted = byName.get(s.name) ?? [];
    wanted.push({ path: s.field.split('.'), into: out[i] });
    byName.set(s.name, wanted);
  });
  const visit = (r: TraceRecord) => {
    const wanted = byName.get(r.name);
    const time = targetTimeOf(r);
    if (wanted === undefined || time === undefined || (r.targetSegment ?? 0) !== segment) return;
    const ticks = BigInt(time);
    if ((fromTicks !== undefined && ticks < fromTicks) || (toTicks !== undefined && ticks >= toTicks)) return;
    for (const { path, into } of wanted) {
      const value = numberOf(valueAt(r.fields, path));
      if (value === undefined) into.skipped++;
      else into.points.push({ seq: r.seq, ticks, value });
    }
  };
  const names = [...byName.keys()];
  await forEachSessionRecord(db, session, budget, visit, (blocks) =>
    blocks.where(sql<boolean>`names && ${names}::text[]`),
  );
  return out;
}

/** The value at a dotted path of a record's fields (array elements by index). */
function valueAt(fields: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = fields;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(v.trim())) return Number(v);
  return undefined;
}

/** A pixel column of a downsampled series: the values whose time falls in `[fromTicks, toTicks)`. */
export interface SeriesColumn {
  column: number;
  fromTicks: bigint;
  toTicks: bigint;
  count: number;
  min: number;
  max: number;
  /** The first and last value of the column, in time order (to draw the line between columns). */
  first: number;
  last: number;
}

/**
 * `points` (in time order) over `[fromTicks, toTicks)` cut into `columns` equal columns, each
 * with the min, max, first and last of its values: drawn as a vertical bar per pixel column, it
 * shows every extreme of a million points in a few hundred columns. Empty columns are left out.
 */
export function downsampleSeries(
  points: readonly SeriesPoint[],
  fromTicks: bigint,
  toTicks: bigint,
  columns: number,
): SeriesColumn[] {
  const span = toTicks - fromTicks;
  const n = BigInt(columns);
  const edge = (c: number) => fromTicks + (span * BigInt(c) + n - 1n) / n;
  const out: SeriesColumn[] = [];
  let current: SeriesColumn | undefined;
  for (const p of points) {
    if (p.ticks < fromTicks || p.ticks >= toTicks) continue;
    // The column whose [edge(c), edge(c+1)) holds the time: edges round up, so that c = floor.
    const c = Number(((p.ticks - fromTicks) * n) / span);
    if (current === undefined || current.column !== c) {
      current = {
        column: c,
        fromTicks: edge(c),
        toTicks: edge(c + 1),
        count: 0,
        min: p.value,
        max: p.value,
        first: p.value,
        last: p.value,
      };
      out.push(current);
    }
    current.count++;
    if (p.value < current.min) current.min = p.value;
    if (p.value > current.max) current.max = p.value;
    current.last = p.value;
  }
  return out;
}
