import type { TraceRecord } from '@tracehub/contracts';
import {
  channelKey,
  type Protocol,
  type RecordContentMatch,
  type RecordMatch,
  recordMatcher,
} from '@tracehub/contracts';
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { type RecordRow, recordToRow } from '../blocks/record-row.js';
import type { Database } from '../database.js';
import { MAX_BLOCK_SPAN_NS } from '../writes/record-blocks.js';
import { BLOCK_DATA_COLUMNS, blockRecords, hostMicros, jsonTextPattern, ScanBudget } from './block-reader.js';
import { inOneSnapshot } from './snapshot.js';

/**
 * What a records query may be narrowed by: a record's content as every filter matches it,
 * and the link, session and host-time range that prune blocks by their summary. Every field
 * is optional and they combine with AND.
 */
export interface RecordFilter extends RecordContentMatch {
  rig?: string;
  link?: string;
  session?: string;
  protocol?: string;
  /** Host time range, inclusive start. */
  from?: Date;
  /** Host time range, exclusive end. */
  to?: Date;
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
  /** What the query may read (default: `ScanBudget`'s default); over it, `ScanLimitError`. */
  budget?: ScanBudget;
}

export interface RecordsPage {
  rows: RecordRow[];
  /** More rows follow the last one in `order`. */
  hasMore: boolean;
  /** Rows come before the first one in `order` (known when the page was reached by a cursor). */
  hasPrevious: boolean;
}

/** The position of a stored row, for a cursor. */
export function positionOf(row: RecordRow): RecordPosition {
  return { hostMicros: row.host_ns / 1000n, session: row.session, seq: row.seq };
}

/**
 * A stored-records filter as the one record match of tracehub (`RecordMatch`): what a page
 * matches its decoded records with, and what the live tail takes its query parameters as.
 */
export function recordMatchOf(f: RecordFilter): RecordMatch {
  const one = <T>(v: T | undefined) => (v === undefined ? undefined : [v]);
  // µs bounds as ns bounds: floor(ns / 1000) >= from µs exactly when ns >= from µs * 1000.
  const ns = (d: Date | undefined) => (d === undefined ? undefined : (BigInt(d.getTime()) * 1_000_000n).toString());
  const { rig, link, session, protocol, from, to, ...content } = f;
  return {
    ...content,
    rigs: one(rig),
    links: one(link),
    sessions: one(session),
    protocols: one(protocol as Protocol | undefined),
    fromNs: ns(from),
    toNs: ns(to),
  };
}

type BlockQuery = SelectQueryBuilder<Database, 'record_blocks', object>;

/** Narrows a block query by what the block summaries say (never wrongly: a kept block may still hold no match). */
export function pruneBlocks<Q extends BlockQuery>(query: Q, f: RecordFilter): Q {
  let q = query as BlockQuery;
  if (f.rig !== undefined) q = q.where('rig', '=', f.rig);
  if (f.link !== undefined) q = q.where('link', '=', f.link);
  if (f.session !== undefined) q = q.where('session', '=', f.session);
  if (f.protocol !== undefined) q = q.where('protocol', '=', f.protocol);
  if (f.names?.length) q = q.where(sql<boolean>`names && ${[...f.names]}::text[]`);
  if (f.types?.length) q = q.where(sql<boolean>`types && ${[...f.types]}::int[]`);
  if (f.kinds?.length) q = q.where(sql<boolean>`kinds && ${[...f.kinds]}::text[]`);
  if (f.qsObj !== undefined) q = q.where(sql<boolean>`${f.qsObj} = any(objs)`);
  if (f.qsSig !== undefined) q = q.where(sql<boolean>`${f.qsSig} = any(sigs)`);
  if (f.qsPrio !== undefined) q = q.where(sql<boolean>`${f.qsPrio}::int = any(prios)`);
  if (f.stpMaster !== undefined && f.stpChannel !== undefined)
    q = q.where(sql<boolean>`${channelKey(f.stpMaster, f.stpChannel)} = any(channels)`);
  if (f.from !== undefined) {
    const fromNs = BigInt(f.from.getTime()) * 1_000_000n;
    q = q.where('max_host_ns', '>=', fromNs).where('host_time', '>=', instant(fromNs - MAX_BLOCK_SPAN_NS));
  }
  if (f.to !== undefined) {
    const toNs = BigInt(f.to.getTime()) * 1_000_000n;
    q = q.where('min_host_ns', '<', toNs).where('host_time', '<', f.to);
  }
  return q as Q;
}

/** ns since the epoch as a timestamptz (µs): what the partition key is compared with. */
export const instant = (ns: bigint) =>
  sql<Date>`timestamptz 'epoch' + ${(ns / 1000n).toString()}::bigint * interval '1 microsecond'`;

interface Keyed {
  micros: bigint;
  session: string;
  seq: number;
  record: TraceRecord;
}

const compareKeys = (a: Keyed, b: Keyed) =>
  a.micros < b.micros
    ? -1
    : a.micros > b.micros
      ? 1
      : a.session < b.session
        ? -1
        : a.session > b.session
          ? 1
          : a.seq - b.seq;

/** Blocks read per round at first; each further round reads twice as many, up to the cap. */
const FIRST_ROUND_BLOCKS = 4;
const MAX_ROUND_BLOCKS = 64;

/**
 * One page of records matching `filter`, in (host_time, session, seq) order or its reverse,
 * by keyset. Blocks are read in the order of their earliest record (`asc`) or latest
 * (`desc`), pruned by their summaries, decoded and filtered, until no unread block can hold
 * a record that belongs on the page. Reads one record more than asked to tell whether more
 * follow.
 */
export async function recordsPage(
  db: Kysely<Database>,
  filter: RecordFilter,
  opts: RecordsPageOptions,
): Promise<RecordsPage> {
  const backwards = opts.before !== undefined;
  // Paging back is paging forward in the reverse order from the cursor, then flipping the rows.
  const scanOrder: SortOrder = backwards ? (opts.order === 'asc' ? 'desc' : 'asc') : opts.order;
  const asc = scanOrder === 'asc';
  const cursor = opts.before ?? opts.after;
  const budget = opts.budget ?? new ScanBudget();
  const matches = recordMatcher(recordMatchOf(filter));
  // A text search parses only the blocks whose JSON holds the text.
  const mustContain = filter.text ? jsonTextPattern(filter.text) : undefined;
  const cursorKey: Keyed | undefined = cursor && {
    micros: cursor.hostMicros,
    session: cursor.session,
    seq: Number(cursor.seq),
    record: undefined as unknown as TraceRecord,
  };
  const beyondCursor = (k: Keyed) =>
    !cursorKey || (asc ? compareKeys(k, cursorKey) > 0 : compareKeys(k, cursorKey) < 0);
  const want = opts.limit + 1;

  // The rounds read one snapshot: a compaction between two of them would otherwise show a
  // merged block beside the blocks it replaced, or hide it behind the last block read.
  const found = await inOneSnapshot(db, async (snapshot) => {
    let found: Keyed[] = [];
    let base = pruneBlocks(
      snapshot.selectFrom('record_blocks').select([...BLOCK_DATA_COLUMNS, 'min_host_ns', 'max_host_ns']),
      filter,
    );
    if (cursor) {
      const cursorNs = cursor.hostMicros * 1000n;
      base = asc
        ? base.where('max_host_ns', '>=', cursorNs).where('host_time', '>=', instant(cursorNs - MAX_BLOCK_SPAN_NS))
        : base.where('min_host_ns', '<', cursorNs + 1000n).where('host_time', '<=', instant(cursorNs));
    }
    let last: { edge: bigint; session: string; firstSeq: bigint } | undefined;
    for (let round = FIRST_ROUND_BLOCKS; ; round = Math.min(round * 2, MAX_ROUND_BLOCKS)) {
      let query = base;
      if (last) {
        const edge = asc ? 'min_host_ns' : 'max_host_ns';
        const at = sql`(${sql.ref(edge)}, session, first_seq)`;
        const mark = sql`(${last.edge.toString()}::bigint, ${last.session}, ${last.firstSeq.toString()}::bigint)`;
        query = query.where(asc ? sql<boolean>`${at} > ${mark}` : sql<boolean>`${at} < ${mark}`);
      }
      const blocks = await (asc
        ? query.orderBy('min_host_ns').orderBy('session').orderBy('first_seq')
        : query.orderBy('max_host_ns', 'desc').orderBy('session', 'desc').orderBy('first_seq', 'desc')
      )
        .limit(round)
        .execute();
      for (const block of blocks) {
        for (const record of blockRecords(block, budget, mustContain)) {
          if (!matches(record)) continue;
          const keyed = { micros: hostMicros(record), session: record.session, seq: record.seq, record };
          if (beyondCursor(keyed)) found.push(keyed);
        }
      }
      found.sort(asc ? compareKeys : (a, b) => compareKeys(b, a));
      if (found.length > want) found = found.slice(0, want);
      if (blocks.length < round) break;
      const lastBlock = blocks[blocks.length - 1];
      last = {
        edge: asc ? lastBlock.min_host_ns : lastBlock.max_host_ns,
        session: lastBlock.session,
        firstSeq: lastBlock.first_seq,
      };
      // Every unread block starts at or after (asc) / ends at or before (desc) the last one read:
      // once the page's last record is strictly on this side of that edge, it is complete.
      if (found.length === want) {
        const edgeMicros = last.edge / 1000n;
        const tail = found[want - 1].micros;
        if (asc ? tail < edgeMicros : tail > edgeMicros) break;
      }
    }
    return found;
  });
  const more = found.length > opts.limit;
  const rows = found.slice(0, opts.limit).map((k) => recordToRow(k.record));
  if (backwards) {
    rows.reverse();
    return { rows, hasMore: true, hasPrevious: more };
  }
  return { rows, hasMore: more, hasPrevious: cursor !== undefined };
}

/**
 * Every record matching `filter` in `order`, a page at a time (exports): memory stays at one
 * page whatever the range holds. One budget covers the whole walk unless `budget` says otherwise.
 */
export async function* filteredRecords(
  db: Kysely<Database>,
  filter: RecordFilter,
  order: SortOrder = 'asc',
  pageSize = 2000,
  budget?: ScanBudget,
): AsyncGenerator<RecordRow> {
  let after: RecordPosition | undefined;
  for (;;) {
    const page = await recordsPage(db, filter, { order, limit: pageSize, after, budget });
    for (const row of page.rows) yield row;
    if (!page.hasMore || page.rows.length === 0) return;
    after = positionOf(page.rows[page.rows.length - 1]);
  }
}
