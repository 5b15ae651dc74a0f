// What codecs emit and how a record gets its place: kept apart from the TypeBox schema in
// record.ts, so that a command that only decodes (tracehub decode) does not load TypeBox.
import type { BatchPlace, BatchRecord, RecordKind, TraceRecord } from './record.js';

/**
 * What a codec emits: a record before the service gives it its place (rig, link, session,
 * seq, chunk, host time). `raw` stays bytes here; services encode it.
 */
export interface DecodedRecord {
  kind: RecordKind;
  type: number;
  name: string;
  targetTs: bigint | null;
  /**
   * The target time: `targetTs` unwrapped across counter wraps, in ticks from the start of its
   * segment (`TargetClock`); set by the decoder service's `TargetTimeDecoder`, not by codecs.
   */
  targetTime?: bigint | null;
  /** The target segment (one more after each target reset) the record is in, with `targetTime`. */
  targetSegment?: number;
  qs?: { obj?: string; sig?: string; prio?: number };
  stp?: { master: number; channel: number };
  fields: Record<string, unknown>;
  text: string;
  raw: Uint8Array;
}

export interface RecordPlace {
  rig: string;
  link: string;
  session: string;
  seq: number;
  chunk: number;
  protocol: TraceRecord['protocol'];
  hostNs: bigint;
}

/** Gives a decoded record its place in the fleet and makes it JSON-safe. */
export function toTraceRecord(decoded: DecodedRecord, place: RecordPlace): TraceRecord {
  return placeRecord(toBatchRecord(decoded, place), place);
}

/**
 * A decoded record as a record message carries it: JSON-safe, with its seq, chunk and host
 * time, without the place its batch says once (rig, link, session, protocol): on big_stress
 * 383 characters of JSON a record instead of 459.
 */
export function toBatchRecord(decoded: DecodedRecord, place: Omit<RecordPlace, keyof BatchPlace>): BatchRecord {
  const record: BatchRecord = {
    seq: place.seq,
    chunk: place.chunk,
    hostNs: hostNsText(place.hostNs),
    targetTs: decoded.targetTs === null ? null : decoded.targetTs.toString(),
    kind: decoded.kind,
    type: decoded.type,
    name: decoded.name,
    fields: jsonSafe(decoded.fields) as Record<string, unknown>,
    text: decoded.text,
    raw: Buffer.from(decoded.raw.buffer, decoded.raw.byteOffset, decoded.raw.byteLength).toString('base64'),
  };
  if (decoded.qs) record.qs = decoded.qs;
  if (decoded.stp) record.stp = decoded.stp;
  if (decoded.targetTime !== undefined && decoded.targetTime !== null) {
    // Kept only where they say more than the stamp: most records' unwrapped time is their own
    // stamp in the first segment, and writing both on every record cost 2 bytes of Postgres a
    // record (38.8 -> 40.9 on big_stress). `targetTimeOf` reads them back.
    if (decoded.targetTime !== decoded.targetTs) record.targetTime = decoded.targetTime.toString();
    if (decoded.targetSegment) record.targetSegment = decoded.targetSegment;
  }
  return record;
}

/** The last host time made text, and its text: a chunk's records share one. */
let lastHostNs = -1n;
let lastHostNsText = '';

/** A host time as decimal text, made once for the records of a chunk that share it. */
function hostNsText(hostNs: bigint): string {
  if (hostNs !== lastHostNs) {
    lastHostNs = hostNs;
    lastHostNsText = hostNs.toString();
  }
  return lastHostNsText;
}

/**
 * A record of a batch or a block, whole: with its batch's place, its keys in the order
 * `toTraceRecord` gives them (exports print records as they are). A record that has its
 * place already (stored before batches left it out, or from another publisher) is returned as
 * it is.
 */
export function placeRecord(r: BatchRecord, place: BatchPlace): TraceRecord {
  // Not an object: another publisher's, for the reader's checks to refuse.
  if (typeof r !== 'object' || r === null || (r as Partial<TraceRecord>).session !== undefined) return r as TraceRecord;
  const record: TraceRecord = {
    rig: place.rig,
    link: place.link,
    session: place.session,
    seq: r.seq,
    chunk: r.chunk,
    protocol: place.protocol,
    hostNs: r.hostNs,
    targetTs: r.targetTs,
    kind: r.kind,
    type: r.type,
    name: r.name,
    fields: r.fields,
    text: r.text,
    raw: r.raw,
  };
  if (r.qs !== undefined) record.qs = r.qs;
  if (r.stp !== undefined) record.stp = r.stp;
  if (r.targetTime !== undefined) record.targetTime = r.targetTime;
  if (r.targetSegment !== undefined) record.targetSegment = r.targetSegment;
  return record;
}

/** `placeRecord` over a batch's or a block's records, in place: the array is then whole records. */
export function placeRecords(records: BatchRecord[], place: BatchPlace): TraceRecord[] {
  for (let i = 0; i < records.length; i++) records[i] = placeRecord(records[i], place);
  return records as TraceRecord[];
}

/**
 * A record's target time in ticks (unwrapped across counter wraps, within its segment): its
 * `targetTime` where the decoder wrote one, else its own stamp; undefined when it has neither.
 */
export function targetTimeOf(r: Pick<TraceRecord, 'targetTime' | 'targetTs'>): string | undefined {
  return r.targetTime ?? r.targetTs ?? undefined;
}

/**
 * BigInts become decimal strings and byte arrays become hex, so fields survive JSON. Values
 * that need no change are returned as they are (no copy): the common case, on a hot path.
 */
export function jsonSafe(value: unknown): unknown {
  return needsConversion(value) ? convert(value) : value;
}

function needsConversion(value: unknown): boolean {
  if (typeof value === 'bigint' || value instanceof Uint8Array) return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (needsConversion(v)) return true;
    return false;
  }
  for (const k in value) if (needsConversion((value as Record<string, unknown>)[k])) return true;
  return false;
}

function convert(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  if (Array.isArray(value)) return value.map(convert);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = convert(v);
    return out;
  }
  return value;
}
