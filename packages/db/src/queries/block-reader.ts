import { type BatchPlace, literalPattern, type TraceRecord } from '@tracehub/contracts';
import { decompressBlock } from '../blocks/compression.js';
import { decodeRecordBlock, parseRecordBlock } from '../blocks/record-block.js';

/**
 * The columns a reader needs of a block to read its records: with the place its records
 * leave out (rig, link, protocol beside the session), given back to each record as it is read.
 */
export interface StoredBlockData {
  id: bigint;
  session: string;
  rig: string;
  link: string;
  protocol: string;
  first_seq: bigint;
  codec: number;
  byte_count: number;
  data: Buffer;
}

/**
 * A query would read more record bytes than the reader allows: the caller asked for
 * something too broad (a text search over weeks, a filter no summary can prune on).
 */
export class ScanLimitError extends Error {
  override name = 'ScanLimitError';
  constructor(
    readonly scannedBytes: number,
    readonly limitBytes: number,
  ) {
    super(
      `the query would scan more than ${size(limitBytes)} of records (it had read ${size(scannedBytes)}): narrow the time range or add a rig, link or session filter`,
    );
  }
}

/** Bytes as people read them: `512 kB`, `2000 MB`. */
const size = (bytes: number) => (bytes < 1e6 ? `${Math.round(bytes / 1e3)} kB` : `${Math.round(bytes / 1e6)} MB`);

/**
 * How much one query may read: record bytes (uncompressed JSON) decoded for it. A query
 * holds one; every block it decodes counts, whether its records matched or not.
 */
export class ScanBudget {
  scannedBytes = 0;
  blocks = 0;
  constructor(readonly limitBytes = DEFAULT_SCAN_LIMIT_BYTES) {}

  spend(bytes: number): void {
    this.scannedBytes += bytes;
    this.blocks++;
    if (this.scannedBytes > this.limitBytes) throw new ScanLimitError(this.scannedBytes, this.limitBytes);
  }
}

/** 2 GB of record JSON: about 4.5 M QS records, a few seconds of decoding. */
export const DEFAULT_SCAN_LIMIT_BYTES = 2_000_000_000;

/** The columns of `record_blocks` that `StoredBlockData` is made of, but its data: what a listing of blocks reads. */
export const BLOCK_META_COLUMNS = [
  'id',
  'session',
  'rig',
  'link',
  'protocol',
  'first_seq',
  'codec',
  'byte_count',
] as const;

/** The columns of `record_blocks` that `StoredBlockData` is made of: a reader selects these. */
export const BLOCK_DATA_COLUMNS = [...BLOCK_META_COLUMNS, 'data'] as const;

/**
 * Decoded blocks of this process, newest use last: pages of the same range (paging on,
 * paging back, a refresh) read the same few blocks again. Blocks are never changed in
 * place (compaction and re-decoding write new ones, with new ids); the key adds to the id
 * what tells blocks of two databases (or of a schema made again) apart.
 */
const cache = new Map<string, TraceRecord[]>();
let cachedBytes = 0;
const cachedSize = new Map<string, number>();
/** About 64 MB of record JSON kept decoded. */
const CACHE_BYTES = 64_000_000;

/**
 * A block's records in seq order (from the cache when this process decoded it lately). With
 * `mustContain`, a block whose JSON text does not match it is not parsed at all and reads as
 * empty: a text search skips most blocks for the cost of decompressing them.
 */
export function blockRecords(block: StoredBlockData, budget?: ScanBudget, mustContain?: RegExp): TraceRecord[] {
  budget?.spend(block.byte_count);
  const key = `${block.id}/${block.session}/${block.first_seq}/${block.byte_count}/${block.data.length}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let records: TraceRecord[];
  // The block's row says its records' place (its protocol is one a decoder published under).
  if (mustContain) {
    const json = decompressBlock(block.codec, block.data).toString('utf8');
    if (!mustContain.test(json)) return [];
    records = parseRecordBlock(json, block as BatchPlace);
  } else {
    records = decodeRecordBlock(block.codec, block.data, block as BatchPlace);
  }
  cache.set(key, records);
  cachedSize.set(key, block.byte_count);
  cachedBytes += block.byte_count;
  for (const [id] of cache) {
    if (cachedBytes <= CACHE_BYTES) break;
    cache.delete(id);
    cachedBytes -= cachedSize.get(id) ?? 0;
    cachedSize.delete(id);
  }
  return records;
}

/**
 * What a block's JSON must contain for one of its records' `text` to contain `text`, case
 * aside: the text as JSON writes it inside a string (quotes, backslashes and control
 * characters escaped), as a case-insensitive pattern. It can match elsewhere in the JSON (a
 * name, a field): the records are then parsed and filtered as usual; it never misses.
 */
export function jsonTextPattern(text: string): RegExp {
  return literalPattern(JSON.stringify(text).slice(1, -1));
}

/** µs of a record's host time: the unit of the (host time, session, seq) order. */
export const hostMicros = (r: TraceRecord) => BigInt(r.hostNs) / 1000n;
