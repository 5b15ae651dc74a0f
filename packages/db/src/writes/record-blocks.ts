import {
  type BatchPlace,
  type BatchRecord,
  type DictionaryEntry,
  mergeSummaries,
  nodeZstd,
  placeRecords,
  type RecordsSummary,
  summarizeRecords,
  type TraceRecord,
} from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import { packColumn } from '../blocks/packed-column.js';
import {
  type BlockPlace,
  type EncodedRecordBlock,
  encodeFramedBlock,
  encodeJsonBlock,
  encodeRecordBlock,
} from '../blocks/record-block.js';
import { encodeStoredDigest } from '../blocks/record-digest.js';
import type { Database } from '../database.js';
import type { SessionCounts } from './sessions.js';

/**
 * Records as they arrived in one message, with their summary: the inside of its records JSON
 * array, or that inside as the zstd frame it travelled in and its length uncompressed.
 */
export type RecordPiece = { summary: RecordsSummary } & (
  | { json: Uint8Array }
  | { frame: Uint8Array; jsonBytes: number }
);

/** A piece's JSON (the inside of an array), decompressed when it came as a frame. */
export function pieceJson(piece: { json: Uint8Array } | { frame: Uint8Array }): Uint8Array {
  if ('json' in piece) return piece.json;
  if (!nodeZstd)
    throw new BadRecordsError('22P02', `records came zstd-compressed and Node ${process.version} has no zstd`);
  try {
    return nodeZstd.decompress(piece.frame);
  } catch (err) {
    throw new BadRecordsError('22P02', `a records frame does not decompress: ${(err as Error).message}`);
  }
}

/**
 * Records of one session to store: parsed records, or pieces as they arrived (each with the
 * summary its decoder made), which are stored without being parsed when none was stored
 * before (a re-delivery is parsed and sorted out record by record).
 */
export interface SessionRecords {
  session: string;
  /** In seq order. */
  records?: readonly TraceRecord[];
  /** With `pieces`: where the records come from. */
  place?: BlockPlace;
  /** In seq order. */
  pieces?: readonly RecordPiece[];
}

/** What one store did to one session. */
export interface SessionBatchSummary {
  session: string;
  /** Counts of the records that were new (re-delivered ones are not counted again). */
  counts: SessionCounts & { records: number };
  /** Fields of the session's latest target-info record in the batch, if it had one. */
  targetInfo: Record<string, unknown> | null;
}

export interface StoreRecordsResult {
  /** Records that were new. */
  inserted: number;
  /** Blocks written. */
  blocks: number;
  /** One entry per session that had new records or target info, in session order. */
  sessions: SessionBatchSummary[];
}

/** A block written by a store holds at most this many records... */
export const MAX_BLOCK_RECORDS = 4000;
/** ...and spans at most this much host time, so a time range prunes by partition with this margin. */
export const MAX_BLOCK_SPAN_NS = 3_600_000_000_000n;

const bySession = (a: { session: string }, b: { session: string }) =>
  a.session < b.session ? -1 : a.session > b.session ? 1 : 0;

/**
 * Stores records as blocks, idempotently on (session, seq): a record whose seq a stored block
 * of its session already covers (a re-delivery) is skipped and counted in nothing. In the
 * caller's transaction (or one of its own):
 * - writers of one session are serialised by a transaction-level advisory lock, sessions
 *   locked in one order, so concurrent storages neither double a record nor deadlock;
 * - dictionary records (kind `dict`) become dictionary entries, keyed by their fields other
 *   than `name` in their order (`obj=0x1000`), the latest of the batch winning;
 * - the counts of the new records are returned per session, for the caller to add.
 */
export async function storeRecords(
  db: Kysely<Database>,
  batch: readonly SessionRecords[],
): Promise<StoreRecordsResult> {
  const write = async (trx: Kysely<Database>) => {
    const result: StoreRecordsResult = { inserted: 0, blocks: 0, sessions: [] };
    const inputs = [...batch]
      .sort(bySession)
      .map((input) => ({ ...input, pieces: input.pieces?.filter((p) => p.summary.recordCount > 0) ?? [] }))
      .filter((input) => input.pieces.length > 0 || (input.records?.length ?? 0) > 0);
    if (inputs.length === 0) return result;
    // The statements are per batch, not per session: a storage writing many slow links at
    // once gets a few dozen records of each session a batch, and a round trip per session
    // per step cost more than the records.
    await lockSessionWriters(
      trx,
      inputs.map((input) => input.session),
    );
    const fast = await sessionsWithNewPieces(trx, inputs);
    const blocks: EncodedRecordBlock[] = [];
    const summaries: Array<{ session: string; summary: RecordsSummary }> = [];
    for (const input of inputs) {
      let summary: RecordsSummary | undefined;
      if (input.place && fast.has(input.session)) {
        for (const run of pieceRuns(input.pieces)) {
          const merged = run.map((p) => p.summary).reduce(mergeSummaries);
          // Pieces that all came as frames are stored as they came; others as one JSON block.
          const framed = run.every((p) => 'frame' in p);
          blocks.push(
            framed
              ? encodeFramedBlock(input.place, merged, run as ReadonlyArray<{ frame: Uint8Array; jsonBytes: number }>)
              : encodeJsonBlock(input.place, merged, run.map(pieceJson)),
          );
          summary = summary ? mergeSummaries(summary, merged) : merged;
        }
      } else {
        const all = input.records ?? input.pieces.flatMap((p) => parsePiece(pieceJson(p), input.place));
        const fresh = await freshRecords(trx, { session: input.session, records: all });
        for (const run of blockRuns(fresh.records, fresh.breaks)) {
          const block = encodeRecordBlock(run);
          blocks.push(block);
          summary = summary ? mergeSummaries(summary, block.summary) : block.summary;
        }
        // Dictionary entries and target info count from every record given, new or not.
        const whole = summarizeRecords(all);
        summary = summary
          ? { ...summary, dictionary: whole.dictionary, targetInfo: whole.targetInfo }
          : { ...whole, recordCount: 0 };
      }
      if (summary) summaries.push({ session: input.session, summary });
    }
    await insertRecordBlocks(trx, blocks);
    result.blocks = blocks.length;
    await storeDictionaryEntries(
      trx,
      summaries.flatMap(({ session, summary }) => summary.dictionary.map((entry) => ({ session, ...entry }))),
    );
    for (const { session, summary } of summaries) {
      const counted = sessionSummary(session, summary);
      if (counted) {
        result.inserted += counted.counts.records;
        result.sessions.push(counted);
      }
    }
    return result;
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/**
 * Takes the write lock of every session (a transaction-level advisory lock), all in one
 * statement and in one order, so concurrent writers neither double a record nor deadlock.
 */
async function lockSessionWriters(trx: Kysely<Database>, sessions: readonly string[]): Promise<void> {
  const keys = sessions.map((session) => `rec:${session}`);
  await sql`select pg_advisory_xact_lock(hashtextextended(k, 0))
    from (select k from unnest(${keys}::text[]) as k order by k) as ordered`.execute(trx);
}

/**
 * The sessions whose pieces can be stored as they are: in seq order without overlapping each
 * other, and overlapping no stored block of their session (one query for the whole batch).
 */
async function sessionsWithNewPieces(
  trx: Kysely<Database>,
  inputs: ReadonlyArray<{ session: string; place?: BlockPlace; pieces: readonly RecordPiece[] }>,
): Promise<Set<string>> {
  const candidates = inputs.filter(
    (input) => input.place && input.pieces.length > 0 && piecesFollowEachOther(input.pieces),
  );
  if (candidates.length === 0) return new Set();
  const sessions = candidates.map((c) => c.session);
  const lows = candidates.map((c) => String(c.pieces[0].summary.firstSeq));
  const highs = candidates.map((c) => String(c.pieces[c.pieces.length - 1].summary.lastSeq));
  const { rows } = await sql<{ session: string }>`
    select distinct b.session from record_blocks b
    join unnest(${sessions}::text[], ${lows}::bigint[], ${highs}::bigint[]) as q(session, low, high)
      on b.session = q.session and b.last_seq >= q.low and b.first_seq <= q.high`.execute(trx);
  const overlapping = new Set(rows.map((r) => r.session));
  return new Set(sessions.filter((session) => !overlapping.has(session)));
}

/** True when the pieces are in seq order and none overlaps the one before. */
function piecesFollowEachOther(pieces: readonly RecordPiece[]): boolean {
  for (let i = 1; i < pieces.length; i++) if (pieces[i].summary.firstSeq <= pieces[i - 1].summary.lastSeq) return false;
  return true;
}

/** Pieces cut into blocks at the size and span limits (a piece is never split). */
function pieceRuns(pieces: readonly RecordPiece[]): RecordPiece[][] {
  const runs: RecordPiece[][] = [];
  let run: RecordPiece[] = [];
  let records = 0;
  let low = 0n;
  let high = 0n;
  for (const piece of pieces) {
    const min = BigInt(piece.summary.minHostNs);
    const max = BigInt(piece.summary.maxHostNs);
    const span = (max > high ? max : high) - (min < low ? min : low);
    // A block's seq range must hold every seq in it: a piece that does not follow the last one
    // (its predecessor not yet delivered) starts a new block, or the range would claim records
    // it does not hold and the late ones would be taken for stored.
    const follows = run.length > 0 && piece.summary.firstSeq === run[run.length - 1].summary.lastSeq + 1;
    if (
      run.length > 0 &&
      (!follows || records + piece.summary.recordCount > MAX_BLOCK_RECORDS || span > MAX_BLOCK_SPAN_NS)
    ) {
      runs.push(run);
      run = [];
    }
    if (run.length === 0) {
      low = min;
      high = max;
      records = 0;
    } else {
      if (min < low) low = min;
      if (max > high) high = max;
    }
    run.push(piece);
    records += piece.summary.recordCount;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * A piece's records, parsed (the slow path: a re-delivery, or pieces without a place), whole:
 * given `place` when they leave it out (as the bus carries them).
 */
function parsePiece(json: Uint8Array, place: BlockPlace | undefined): TraceRecord[] {
  const text = `[${Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')}]`;
  let records: unknown;
  try {
    records = JSON.parse(text);
  } catch (err) {
    throw new BadRecordsError('22P02', `records are not JSON: ${(err as Error).message}`);
  }
  if (!place || !Array.isArray(records)) return records as TraceRecord[];
  // The row's protocol is one a decoder published under: a `Protocol`.
  return placeRecords(records as BatchRecord[], place as BatchPlace);
}

/**
 * The records of `input` that no stored block holds, in seq order (a record given twice
 * once), and the seqs before which a stored block lies between two of them.
 */
async function freshRecords(
  trx: Kysely<Database>,
  input: { session: string; records: readonly TraceRecord[] },
): Promise<{ records: TraceRecord[]; breaks: Set<number>; length: number }> {
  let sorted = input.records;
  for (const record of sorted) checkRecord(record);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].seq <= sorted[i - 1].seq) {
      sorted = [...input.records].sort((a, b) => a.seq - b.seq);
      break;
    }
  }
  const stored = await trx
    .selectFrom('record_blocks')
    .select(['first_seq', 'last_seq'])
    .where('session', '=', input.session)
    .where('last_seq', '>=', BigInt(sorted[0].seq))
    .where('first_seq', '<=', BigInt(sorted[sorted.length - 1].seq))
    .orderBy('first_seq')
    .execute();
  const ranges = stored.map((b) => [Number(b.first_seq), Number(b.last_seq)] as const);
  const records: TraceRecord[] = [];
  const breaks = new Set<number>();
  let r = 0;
  for (const record of sorted) {
    while (r < ranges.length && ranges[r][1] < record.seq) r++;
    if (r < ranges.length && ranges[r][0] <= record.seq) continue;
    const previous = records[records.length - 1];
    if (previous !== undefined && previous.seq === record.seq) continue;
    // A stored block between the previous fresh record and this one: a new block starts here.
    if (previous !== undefined && r > 0 && ranges[r - 1][0] > previous.seq) breaks.add(record.seq);
    records.push(record);
  }
  return { records, breaks, length: records.length };
}

/** Fresh records cut into blocks: at gaps in seq, at stored blocks between them, at the size and span limits. */
function blockRuns(records: readonly TraceRecord[], breaks: ReadonlySet<number>): TraceRecord[][] {
  const runs: TraceRecord[][] = [];
  let run: TraceRecord[] = [];
  let low = 0n;
  let high = 0n;
  for (const record of records) {
    const host = BigInt(record.hostNs);
    const span = (host > high ? host : high) - (host < low ? host : low);
    const follows = run.length > 0 && record.seq === run[run.length - 1].seq + 1;
    if (
      run.length > 0 &&
      (!follows || breaks.has(record.seq) || run.length >= MAX_BLOCK_RECORDS || span > MAX_BLOCK_SPAN_NS)
    ) {
      runs.push(run);
      run = [];
    }
    if (run.length === 0) low = high = host;
    else if (host < low) low = host;
    else if (host > high) high = host;
    run.push(record);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** The row of an encoded block. */
function recordBlockRow(b: EncodedRecordBlock) {
  const m = b.summary;
  const minHostNs = BigInt(m.minHostNs);
  return {
    session: b.session,
    first_seq: m.firstSeq,
    last_seq: m.lastSeq,
    host_time: sql<Date>`timestamptz 'epoch' + ${(minHostNs / 1000n).toString()}::bigint * interval '1 microsecond'`,
    min_host_ns: minHostNs,
    max_host_ns: m.maxHostNs,
    rig: b.rig,
    link: b.link,
    protocol: b.protocol,
    record_count: m.recordCount,
    min_target_ts: m.minTargetTs,
    max_target_ts: m.maxTargetTs,
    first_chunk: m.firstChunk,
    last_chunk: m.lastChunk,
    error_count: m.errorCount,
    gap_count: m.gapCount,
    lost_bytes: m.lostBytes,
    names: m.names,
    kinds: m.kinds,
    types: m.types,
    objs: m.objs,
    sigs: m.sigs,
    prios: m.prios,
    channels: m.channels,
    states: m.states === null ? null : JSON.stringify(m.states),
    digest: m.digest ? encodeStoredDigest(m.digest) : null,
    ...targetColumns(m),
    codec: b.codec,
    byte_count: b.byteCount,
    data: b.data,
  };
}

/** The target-time and state-machine summary columns of a block (null where its summary has none). */
function targetColumns(m: RecordsSummary) {
  const t = m.target;
  return {
    target_first_segment: t?.firstSegment ?? null,
    target_last_segment: t?.lastSegment ?? null,
    min_target_time: t?.minTime ?? null,
    max_target_time: t?.maxTime ?? null,
    target_untimed: t?.untimed ?? null,
    target_lanes: t ? t.lanes : null,
    target_index: t ? packColumn(Buffer.from(t.index, 'base64')) : null,
    machines:
      m.machines === undefined || m.machines === null ? null : packColumn(Buffer.from(JSON.stringify(m.machines))),
  };
}

/** Writes encoded block rows, many to a statement. */
export async function insertRecordBlocks(db: Kysely<Database>, blocks: readonly EncodedRecordBlock[]): Promise<void> {
  // Postgres takes at most 65 535 parameters a statement; a block row has 29.
  // Postgres takes at most 65 535 parameters a statement; a block row has 36.
  for (let i = 0; i < blocks.length; i += 1000) {
    await db
      .insertInto('record_blocks')
      .values(blocks.slice(i, i + 1000).map(recordBlockRow))
      .execute();
  }
}

/** Upserts dictionary entries of sessions (the latest of each session by seq already chosen). */
async function storeDictionaryEntries(
  trx: Kysely<Database>,
  entries: ReadonlyArray<DictionaryEntry & { session: string }>,
): Promise<void> {
  for (let i = 0; i < entries.length; i += 5000) {
    await trx
      .insertInto('dictionaries')
      .values(entries.slice(i, i + 5000).map(({ session, kind, key, name }) => ({ session, kind, key, name })))
      .onConflict((oc) => oc.columns(['session', 'kind', 'key']).doUpdateSet({ name: sql`excluded.name` }))
      .execute();
  }
}

/** µs-truncated instant of a host time in ns, as a Date (ms). */
const hostDate = (hostNs: string) => new Date(Number(BigInt(hostNs) / 1_000_000n));

/** What the session gained (the summary of its new records) and its latest target info. */
function sessionSummary(session: string, m: RecordsSummary): SessionBatchSummary | undefined {
  if (m.recordCount === 0 && !m.targetInfo) return undefined;
  const none = m.recordCount === 0;
  return {
    session,
    counts: {
      records: m.recordCount,
      errors: none ? 0 : m.errorCount,
      gaps: none ? 0 : m.gapCount,
      lostBytes: none ? 0 : m.lostBytes,
      lastChunk: none ? -1 : m.lastChunk,
      firstHostTime: none ? undefined : hostDate(m.minHostNs),
      lastHostTime: none ? undefined : hostDate(m.maxHostNs),
    },
    targetInfo: m.targetInfo?.fields ?? null,
  };
}

/**
 * Records that cannot be stored as they are: not JSON, or a record without a field every
 * record has. It carries the SQLSTATE Postgres gives the same fault (22P02 bad text
 * representation, 23502 a missing value), so a writer treats it as it treats Postgres's own
 * data errors: the batch is refused as data, never retried.
 */
export class BadRecordsError extends Error {
  override name = 'BadRecordsError';
  constructor(
    readonly code: '22P02' | '23502',
    message: string,
  ) {
    super(message);
  }
}

const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Throws `BadRecordsError` unless `r` has every field a stored record needs, of its type. */
export function checkRecord(r: TraceRecord): void {
  const missing =
    typeof r !== 'object' || r === null
      ? 'the record'
      : typeof r.session !== 'string'
        ? 'session'
        : !isCount(r.seq)
          ? 'seq'
          : !isCount(r.chunk)
            ? 'chunk'
            : typeof r.hostNs !== 'string' || !/^[0-9]{1,20}$/.test(r.hostNs)
              ? 'hostNs'
              : typeof r.rig !== 'string' || typeof r.link !== 'string' || typeof r.protocol !== 'string'
                ? 'rig, link or protocol'
                : typeof r.kind !== 'string' || typeof r.name !== 'string' || !Number.isInteger(r.type)
                  ? 'kind, name or type'
                  : typeof r.fields !== 'object' || r.fields === null
                    ? 'fields'
                    : typeof r.text !== 'string' || typeof r.raw !== 'string'
                      ? 'text or raw'
                      : r.targetTs !== null && typeof r.targetTs !== 'string'
                        ? 'targetTs'
                        : undefined;
  if (missing !== undefined) throw new BadRecordsError('23502', `a record has no valid ${missing}`);
}

/**
 * Records given as one JSON array of `TraceRecord`s (any sessions): parsed, grouped by
 * session, and stored as `storeRecords` does.
 */
export async function storeRecordsJson(db: Kysely<Database>, recordsJson: Uint8Array): Promise<StoreRecordsResult> {
  let records: unknown;
  try {
    records = JSON.parse(
      Buffer.from(recordsJson.buffer, recordsJson.byteOffset, recordsJson.byteLength).toString('utf8'),
    );
  } catch (err) {
    throw new BadRecordsError('22P02', `records are not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(records)) throw new BadRecordsError('22P02', 'records are not a JSON array');
  for (const record of records) checkRecord(record);
  return storeRecords(db, groupBySession(records as TraceRecord[]));
}

/** Records grouped by session, each group in the order given. */
export function groupBySession(records: readonly TraceRecord[]): SessionRecords[] {
  const groups = new Map<string, TraceRecord[]>();
  for (const r of records) {
    let group = groups.get(r.session);
    if (!group) groups.set(r.session, (group = []));
    group.push(r);
  }
  return [...groups].map(([session, list]) => ({ session, records: list }));
}
