import type { DecodedRecord } from '@tracehub/contracts';
import type { QsTargetConfig } from './config.js';
import type { QsDictionaries, QsKey, QsKeyNames } from './dictionaries.js';
import { PairText, type PieceMemo, type TimestampText } from './format.js';
import type { LineParts } from './line-parts.js';
import type { PayloadReader } from './reader.js';

/**
 * What the parsers of predefined records see of the decoder: the reader over the record, the
 * configuration, the names of addresses and signals, and the line being built. The record
 * decoder is this context; its parsers are free functions over it, one module per record
 * family, dispatched by `RECORD_PARSERS`. This module imports no parser and no decoder, so the
 * codec has no import circle.
 */
export interface RecordContext {
  /** The reader of the record being decoded. */
  readonly r: PayloadReader;
  /** Sizes in use: the options until a target info arrives, then the target's. */
  readonly config: QsTargetConfig;
  readonly dicts: QsDictionaries;
  /** Names of the predefined ids in the target's version. */
  readonly names: readonly string[];
  /** QSPY's `%010u` of the timestamps. */
  readonly ts: TimestampText;
  /** QSPY's `%010u` of the tick counter (apart from the timestamps: they interleave). */
  readonly counterText: TimestampText;
  /** The last line tails of the most frequent records (see PieceMemo). */
  readonly dispatchText: PieceMemo;
  readonly activePostText: PieceMemo;
  readonly timeEvtText: PieceMemo;
  /**
   * Whether records carry their fields and addressing (the text-only decoder: no, and the
   * parsers make neither, so that the compiler can leave their objects out).
   */
  readonly fieldsWanted: boolean;

  /** An object's text and field renderings, from one lookup per key and record. */
  objNames(key: QsKey): QsKeyNames;
  funNames(key: QsKey): QsKeyNames;
  /** An object as QSPY's text shows it. */
  obj(key: QsKey): string;
  /** An object as the fields give it: its name, or its address at the target's real size. */
  objF(key: QsKey): string;
  fun(key: QsKey): string;
  funF(key: QsKey): string;
  /** A signal as QSPY's text shows it. */
  sig(sig: number, obj: QsKey): string;
  /** A signal as the fields give it: its name, or its number. */
  sigF(sig: number, obj: QsKey): string;
  /** The second of two objects QSPY prints in one call (AO-Defer/RCall/RCllA `Que=`). */
  secondObj(first: QsKey, second: QsKey): string;

  /**
   * Whether the line of this record was written again from the bytes it had the last time it
   * came with the same values (the text-only decoder keeps recent lines). `parts` and the raw
   * values `k0`..`k5` are everything the line shows but its timestamp `t` (-1: none). A parser
   * asks before it looks its values up: on true only `done` is left.
   */
  lineAgain(t: number, parts: LineParts, k0: QsKey, k1: QsKey, k2: QsKey, k3: number, k4: number, k5: number): boolean;
  /** A line from its timestamp and the tail kept in `m`. */
  memoLine(t: number, m: PieceMemo): string;
  /** A line from its timestamp and the rest. */
  tsLine(t: number, rest: string): string;
  /** A line: its timestamp, then `parts` around the values. */
  partsLine(t: number, parts: LineParts, v0: string, v1: string, v2?: string, v3?: string, v4?: string): string;
  /** A line with no timestamp digits (its parts begin with `===RTC===> ` or with blanks). */
  plainLine(parts: LineParts, v0: string, v1: string, v2?: string, v3?: string): string;
  /** A time event's line: `memoLine` with the counters after the kept part. */
  timeEvtLine(t: number, m: PieceMemo, tim: number, int: number): string;

  /** The record when the payload fitted its layout, else QSPY's length error (spec 3.1). */
  done(
    id: number,
    kind: RecordKind,
    t: number | null,
    text: string,
    fields: Fields,
    raw: Uint8Array,
    qs?: QsAddressing,
  ): DecodedRecord;
  /** QSPY's length error of the record `id`. */
  lengthError(id: number, raw: Uint8Array): DecodedRecord;
  /**
   * Takes the configuration of a target info: dictionaries discarded on a reset, or when it
   * differs from an earlier one (the result: QSPY's "mismatch").
   */
  takeTargetConfig(next: QsTargetConfig, reset: boolean): boolean;
}

/**
 * The parser of one kind of predefined record. The reader `r` and the configuration `c` are
 * the context's, handed over with it, so that a layout reads one line per field
 * (`r.u(c.timeSize)`) with both at hand: read through the context at every field, or through a
 * helper per field, they cost more instructions (PERFORMANCE.md, "The record decoder by record
 * family").
 */
export type RecordParser = (
  d: RecordContext,
  r: PayloadReader,
  c: QsTargetConfig,
  id: number,
  raw: Uint8Array,
) => DecodedRecord;

/** Whether a record is a record of the target's, a dictionary entry, information or an error. */
export type RecordKind = DecodedRecord['kind'];
/** A record's fields, as its parser builds them. */
export type Fields = Record<string, unknown>;
export type QsAddressing = NonNullable<DecodedRecord['qs']>;

/** The fields of a record decoded for its text only (see `fieldsWanted`). */
export const NO_FIELDS: Fields = Object.freeze({});
/** Where a line without a timestamp begins: as many blanks as the timestamp's digits and space. */
export const NO_TS = '           ';
/** What QSPY prints before the lines of state entries, exits and transitions. */
export const RTC = '===RTC===> ';

/** An event's pool and reference count as QSPY prints them (`,Pool=1,Ref=2>`). */
export const POOL_REF = new PairText(',Pool=', ',Ref=', '>');

/**
 * An event's pool and reference count as `pool * 256 + ref`: a byte each, or before QS 4.2 in
 * most records (`packed`) one byte of both, the pool in its top two bits. One number, so that
 * reading them makes no object.
 */
export function readPoolRef(r: PayloadReader, packed: boolean): number {
  const pr = r.u(1);
  return packed ? (pr >> 6) * 256 + (pr & 0x3f) : pr * 256 + r.u(1);
}
