import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { Database } from '../database.js';
import type { RecordRow } from './session-records.js';

/** What a records query may be narrowed by; every field is optional and they combine with AND. */
export interface RecordFilter {
  rig?: string;
  link?: string;
  session?: string;
  protocol?: string;
  /** Host time range, inclusive start. */
  from?: Date;
  /** Host time range, exclusive end. */
  to?: Date;
  /** Any of these record names. */
  names?: readonly string[];
  /** Any of these numeric record types. */
  types?: readonly number[];
  /** Any of these kinds (`record`, `error`, ...). */
  kinds?: readonly string[];
  qsObj?: string;
  qsSig?: string;
  qsPrio?: number;
  stpMaster?: number;
  stpChannel?: number;
  /** Case-insensitive substring of `text` (served by the trigram index). */
  text?: string;
}

/**
 * A place in the order (host_time, session, seq): the identity of a record plus its time,
 * which is what a keyset cursor holds. `hostMicros` is `host_ns / 1000`, the stored µs.
 */
export interface RecordPosition {
  hostMicros: bigint;
  session: string;
  seq: bigint;
}

export type SortOrder = 'asc' | 'desc';

export interface RecordsPageOptions {
  /** `asc`: oldest first; `desc`: newest first. */
  order: SortOrder;
  limit: number;
  /** Continue after this record in `order`... */
  after?: RecordPosition;
  /** ...or return the page just before this record (in `order`), for paging back. */
  before?: RecordPosition;
}

export interface RecordsPage {
  rows: RecordRow[];
  /** More rows follow the last one in `order`. */
  hasMore: boolean;
  /** Rows come before the first one in `order` (known when the page was reached by a cursor). */
  hasPrevious: boolean;
}

/** Applies a filter to a records query (all values travel as bind parameters). */
export function recordFilterWhere(eb: ExpressionBuilder<Database, 'records'>, f: RecordFilter): Expression<SqlBool> {
  const and: Expression<SqlBool>[] = [];
  if (f.rig !== undefined) and.push(eb('rig', '=', f.rig));
  if (f.link !== undefined) and.push(eb('link', '=', f.link));
  if (f.session !== undefined) and.push(eb('session', '=', f.session));
  if (f.protocol !== undefined) and.push(eb('protocol', '=', f.protocol));
  if (f.from !== undefined) and.push(eb('host_time', '>=', f.from));
  if (f.to !== undefined) and.push(eb('host_time', '<', f.to));
  if (f.names?.length) and.push(eb('name', 'in', [...f.names]));
  if (f.types?.length) and.push(eb('type', 'in', [...f.types]));
  if (f.kinds?.length) and.push(eb('kind', 'in', [...f.kinds]));
  if (f.qsObj !== undefined) and.push(eb('qs_obj', '=', f.qsObj));
  if (f.qsSig !== undefined) and.push(eb('qs_sig', '=', f.qsSig));
  if (f.qsPrio !== undefined) and.push(eb('qs_prio', '=', f.qsPrio));
  if (f.stpMaster !== undefined) and.push(eb('stp_master', '=', f.stpMaster));
  if (f.stpChannel !== undefined) and.push(eb('stp_channel', '=', f.stpChannel));
  if (f.text !== undefined && f.text !== '') and.push(eb('text', 'ilike', `%${escapeLike(f.text)}%`));
  return eb.and(and);
}

/** Escapes LIKE's wildcards so user text matches literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** The position of a stored row, for a cursor. */
export function positionOf(row: RecordRow): RecordPosition {
  return { hostMicros: row.host_ns / 1000n, session: row.session, seq: row.seq };
}

/**
 * One page of records matching `filter`, in (host_time, session, seq) order or its reverse,
 * by keyset: `(host_time, session, seq) > (cursor)`, never OFFSET. Reads one row more than
 * asked to tell whether more follow.
 */
export async function recordsPage(
  db: Kysely<Database>,
  filter: RecordFilter,
  opts: RecordsPageOptions,
): Promise<RecordsPage> {
  const backwards = opts.before !== undefined;
  // Paging back is paging forward in the reverse order from the cursor, then flipping the rows.
  const scanOrder: SortOrder = backwards ? (opts.order === 'asc' ? 'desc' : 'asc') : opts.order;
  const cursor = opts.before ?? opts.after;
  let query = db
    .selectFrom('records')
    .selectAll()
    .where((eb) => recordFilterWhere(eb, filter));
  if (cursor) {
    const cmp = scanOrder === 'asc' ? sql`>` : sql`<`;
    const at = sql`timestamptz 'epoch' + ${cursor.hostMicros.toString()}::bigint * interval '1 microsecond'`;
    // The row comparison decides; the plain bound on host_time lets the (rig, link, host_time)
    // and (name, host_time) indexes start the scan at the cursor.
    query = query.where(sql<SqlBool>`host_time ${scanOrder === 'asc' ? sql`>=` : sql`<=`} ${at}`);
    query = query.where(
      sql<SqlBool>`(host_time, session, seq) ${cmp} (${at}, ${cursor.session}, ${cursor.seq.toString()}::bigint)`,
    );
  }
  const rows = await query
    .orderBy('host_time', scanOrder)
    .orderBy('session', scanOrder)
    .orderBy('seq', scanOrder)
    .limit(opts.limit + 1)
    .execute();
  const more = rows.length > opts.limit;
  if (more) rows.pop();
  if (backwards) {
    rows.reverse();
    return { rows, hasMore: true, hasPrevious: more };
  }
  return { rows, hasMore: more, hasPrevious: cursor !== undefined };
}

/**
 * Every record matching `filter` in `order`, a page at a time (exports): memory stays at one
 * page whatever the range holds.
 */
export async function* filteredRecords(
  db: Kysely<Database>,
  filter: RecordFilter,
  order: SortOrder = 'asc',
  pageSize = 2000,
): AsyncGenerator<RecordRow> {
  let after: RecordPosition | undefined;
  for (;;) {
    const page = await recordsPage(db, filter, { order, limit: pageSize, after });
    for (const row of page.rows) yield row;
    if (!page.hasMore || page.rows.length === 0) return;
    after = positionOf(page.rows[page.rows.length - 1]);
  }
}
