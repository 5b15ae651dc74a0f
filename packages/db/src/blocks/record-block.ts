import {
  type BatchPlace,
  type BatchRecord,
  placeRecords,
  type RecordsSummary,
  summarizeRecords,
  type TraceRecord,
} from '@tracehub/contracts';
import { BlockCodec, compressBlock, decompressBlock, encodePieceFrames, WRITE_CODEC } from './compression.js';

/**
 * A block of records: consecutive records (by seq) of one link session, stored as the JSON
 * array they travelled in on the bus, compressed, beside a summary that queries prune on.
 * Why this encoding, and what it costs, is in the package README ("Records in blocks").
 */

/** Where a block's records come from: the same for every record of the block. */
export interface BlockPlace {
  session: string;
  rig: string;
  link: string;
  protocol: string;
}

/** A block ready to store: its place, its summary and its compressed records. */
export interface EncodedRecordBlock extends BlockPlace {
  summary: RecordsSummary;
  codec: number;
  /** Bytes of the records' JSON, uncompressed. */
  byteCount: number;
  data: Buffer;
}

/**
 * zstd level of record blocks. Measured on the big QS capture's records (blocks of 4000):
 * level 1 gives 27.5 B/record at 0.6 µs, level 3 31.0 B at 1.5 µs, level 6 27.0 B at 2.9 µs,
 * level 9 24.1 B at 5.4 µs: level 1 is both the smallest but for level 9 and the cheapest.
 */
export const RECORD_BLOCK_LEVEL = 1;

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/**
 * A block from pieces of one session's records JSON, each the inside of a JSON array (no
 * brackets) with its summary, in seq order: the pieces are joined as they are (no parse, no
 * second serialisation) and compressed; their summaries merged by the caller.
 */
export function encodeJsonBlock(
  place: BlockPlace,
  summary: RecordsSummary,
  pieces: readonly Uint8Array[],
  level = RECORD_BLOCK_LEVEL,
): EncodedRecordBlock {
  const parts: Uint8Array[] = [OPEN];
  for (const piece of pieces) {
    if (piece.length === 0) continue;
    if (parts.length > 1) parts.push(COMMA);
    parts.push(piece);
  }
  parts.push(CLOSE);
  const json = Buffer.concat(parts);
  return { ...place, summary, codec: WRITE_CODEC, byteCount: json.length, data: compressBlock(json, level) };
}

/**
 * A block from pieces that came as zstd frames (the bus's record payloads: the inside of a
 * JSON array each, and its length uncompressed), stored as they came: no decompression, no
 * second compression, no copy of the records' JSON (`BlockCodec.ZstdPieces`).
 */
export function encodeFramedBlock(
  place: BlockPlace,
  summary: RecordsSummary,
  pieces: ReadonlyArray<{ frame: Uint8Array; jsonBytes: number }>,
): EncodedRecordBlock {
  const kept = pieces.filter((p) => p.jsonBytes > 0);
  // The JSON the block reads as: the pieces, commas between them, and the brackets.
  const byteCount = kept.reduce((n, p) => n + p.jsonBytes, 0) + Math.max(0, kept.length - 1) + 2;
  return {
    ...place,
    summary,
    codec: BlockCodec.ZstdPieces,
    byteCount,
    data: encodePieceFrames(kept.map((p) => p.frame)),
  };
}

/** A block of `records` (one session, seq order, at least one), serialised here. */
export function encodeRecordBlock(records: readonly TraceRecord[]): EncodedRecordBlock {
  const { session, rig, link, protocol } = records[0];
  const json = Buffer.from(JSON.stringify(records));
  return {
    session,
    rig,
    link,
    protocol,
    summary: summarizeRecords(records),
    codec: WRITE_CODEC,
    byteCount: json.length,
    data: compressBlock(json, RECORD_BLOCK_LEVEL),
  };
}

export class BadRecordBlockError extends Error {
  override name = 'BadRecordBlockError';
}

/** The JSON of a stored block's records, between its brackets (for joining blocks without parsing). */
export function recordBlockJsonInside(codec: number, data: Uint8Array): Buffer {
  const json = decompressBlock(codec, data);
  if (json.length < 2 || json[0] !== 0x5b || json[json.length - 1] !== 0x5d)
    throw new BadRecordBlockError('a record block does not hold a JSON array');
  return json.subarray(1, json.length - 1);
}

/**
 * The records of a stored block, in seq order, whole: a block's records leave out the place
 * its row says (`BatchRecord`), given back here.
 */
export function decodeRecordBlock(codec: number, data: Uint8Array, place: BatchPlace): TraceRecord[] {
  return parseRecordBlock(decompressBlock(codec, data).toString('utf8'), place);
}

/** `decodeRecordBlock` of a block decompressed already (`json`: its records' JSON array). */
export function parseRecordBlock(json: string, place: BatchPlace): TraceRecord[] {
  const records: unknown = JSON.parse(json);
  if (!Array.isArray(records)) throw new BadRecordBlockError('a record block does not hold a JSON array');
  return placeRecords(records as BatchRecord[], place);
}
