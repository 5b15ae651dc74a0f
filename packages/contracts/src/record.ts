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
    /**
     * Target time in ticks from the start of the record's target segment: `targetTs` unwrapped
     * across counter wraps; a record without a stamp of its own has its segment's last one.
     * Absent when the session has no target time yet (or was stored before it was kept).
     */
    targetTime: Type.Optional(DecimalString),
    /** The target segment: 0 for a session's first, one more after each target reset. */
    targetSegment: Type.Optional(Type.Integer({ minimum: 0 })),
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
 * What every record of a batch (and of a stored block) shares: carried once, by the batch's
 * subject and headers and by the block's row, not by each record.
 */
export type BatchPlace = Pick<TraceRecord, 'rig' | 'link' | 'session' | 'protocol'>;

/**
 * A record as a record message carries it and a block stores it: without its batch's place.
 * Readers give it back whole (`placeRecords`). A full `TraceRecord` is one too.
 */
export type BatchRecord = Omit<TraceRecord, keyof BatchPlace>;

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
