import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { NAME_PATTERN, PROTOCOLS } from './names.js';

export const RECORD_KINDS = ['record', 'dict', 'info', 'marker', 'error'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export const RecordKindSchema = Type.Union(
  RECORD_KINDS.map((k) => Type.Literal(k)),
  {
    description:
      'record: a trace record; dict: a dictionary entry; info: target info / configuration; marker: a decoder marker (STP); error: what a decoder skipped or could not decode',
  },
);
export const ProtocolSchema = Type.Union(PROTOCOLS.map((p) => Type.Literal(p)));

/** A decimal integer carried as a string: nanosecond clocks and 64-bit target stamps exceed 2^53. */
export const DecimalString = Type.String({ pattern: '^-?[0-9]{1,20}$' });

export const QsAddressingSchema = Type.Object(
  {
    /** Object the record is about: dictionary name, or hex address when unknown. */
    obj: Type.Optional(Type.String()),
    /** Signal name (or number when unknown). */
    sig: Type.Optional(Type.String()),
    /** Active-object priority. */
    prio: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const StpAddressingSchema = Type.Object(
  {
    master: Type.Integer({ minimum: 0, maximum: 0xffff }),
    channel: Type.Integer({ minimum: 0, maximum: 0xffff }),
  },
  { additionalProperties: false },
);

export const TraceRecordSchema = Type.Object(
  {
    rig: Type.String({ pattern: NAME_PATTERN }),
    link: Type.String({ pattern: NAME_PATTERN }),
    session: Type.String({ minLength: 1, maxLength: 64 }),
    /** Index of the record within its session: with `session`, the record's identity. */
    seq: Type.Integer({ minimum: 0 }),
    /** Index of the raw chunk that completed the record. */
    chunk: Type.Integer({ minimum: 0 }),
    protocol: ProtocolSchema,
    /** Receive time (ns since the Unix epoch) of the chunk that completed the record. */
    hostNs: DecimalString,
    /** Target timestamp in the target's own units, when the record has one. */
    targetTs: Type.Union([DecimalString, Type.Null()]),
    kind: RecordKindSchema,
    /** Numeric record id (QS record id, STP output message type / marker code). */
    type: Type.Integer(),
    /** Symbolic name: QS_QEP_STATE_ENTRY, PHILO_STAT, STP_MESSAGE, SEQ_GAP, ... */
    name: Type.String(),
    qs: Type.Optional(QsAddressingSchema),
    stp: Type.Optional(StpAddressingSchema),
    /** Decoded values, dictionary names resolved. */
    fields: Type.Record(Type.String(), Type.Unknown()),
    /** The human-readable line; for QS exactly what qspy prints (may span several lines). */
    text: Type.String(),
    /** Base64 of the frame or message bytes the record was decoded from. */
    raw: Type.String(),
  },
  { additionalProperties: false, $id: 'TraceRecord' },
);

export type TraceRecord = Static<typeof TraceRecordSchema>;

/**
 * What a codec emits: a record before the service gives it its place (rig, link, session,
 * seq, chunk, host time). `raw` stays bytes here; services encode it.
 */
export interface DecodedRecord {
  kind: RecordKind;
  type: number;
  name: string;
  targetTs: bigint | null;
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
  const record: TraceRecord = {
    rig: place.rig,
    link: place.link,
    session: place.session,
    seq: place.seq,
    chunk: place.chunk,
    protocol: place.protocol,
    hostNs: place.hostNs.toString(),
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
  return record;
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

export interface ValidationProblem {
  path: string;
  message: string;
}

/** Checks a value against the TraceRecord schema; returns the problems (empty when valid). */
export function validateTraceRecord(value: unknown): ValidationProblem[] {
  return [...Value.Errors(TraceRecordSchema, value)].map((e) => ({ path: e.path, message: e.message }));
}

export function isTraceRecord(value: unknown): value is TraceRecord {
  return Value.Check(TraceRecordSchema, value);
}
