import { type Static, Type } from '@sinclair/typebox';
import { NsText, TraceRecordRef } from './common.js';

const Ticks = (description: string) => Type.String({ pattern: '^[0-9]{1,20}$', description });
const Seconds = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

const TickRate = Type.Union([Type.Number(), Type.Null()], {
  description: "the link's `tickRate` setting (ticks per second); null when it has none: target time is then in ticks",
});
const Unit = Type.Union([Type.Literal('s'), Type.Literal('ticks')], {
  description: "the target-time axis: seconds when the link's tick rate is known, else ticks",
});

/** One stretch of a session's target time, between target resets. */
export const TargetSegment = Type.Object({
  segment: Type.Integer({ description: "0 for the session's first; one more after each target reset" }),
  records: Type.Integer({ description: 'records of the segment with a target time' }),
  firstSeq: Type.Integer(),
  lastSeq: Type.Integer(),
  firstTicks: Ticks('target time of its first record, ticks (the raw stamps unwrapped across counter wraps)'),
  lastTicks: Ticks('target time of its last record, ticks'),
  firstSeconds: Seconds('firstTicks / tickRate; null without a tick rate'),
  lastSeconds: Seconds('lastTicks / tickRate; null without a tick rate'),
  firstHostNs: NsText('host receive time of its first record, ns since the Unix epoch'),
  lastHostNs: NsText('host receive time of its last record'),
});
export type TargetSegment = Static<typeof TargetSegment>;

/** `GET /sessions/{id}/target-time` takes no parameters. */
export const SessionTargetTimeQuery = Type.Object({});

/** `GET /sessions/{id}/target-time`: a session's target segments and how its time reads. */
export const SessionTargetTime = Type.Object({
  session: Type.String(),
  tickRate: TickRate,
  unit: Unit,
  untimed: Type.Integer({
    description: 'records with no target time (stored before target times were kept, or before the first stamp)',
  }),
  segments: Type.Array(TargetSegment),
});
export type SessionTargetTime = Static<typeof SessionTargetTime>;

/** A time on the target's axis: whole ticks, or seconds (with a fraction) when `unit=s`. */
const AxisTime = (description: string) =>
  Type.String({ pattern: '^[0-9]{1,20}(\\.[0-9]{1,12})?$', maxLength: 33, description });

/** `GET /sessions/{id}/target-records`: a window of target time. */
export const TargetRecordsQuery = Type.Object({
  segment: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'the target segment' }),
  from: Type.Optional(AxisTime('start of the window (inclusive), in `unit`')),
  to: Type.Optional(AxisTime('end of the window (exclusive), in `unit`')),
  unit: Type.Union([Type.Literal('ticks'), Type.Literal('s')], {
    default: 'ticks',
    description: "what `from` and `to` count: ticks, or seconds (the link's tick rate must be set)",
  }),
  afterSeq: Type.Optional(
    Type.Integer({ minimum: -1, description: 'keyset: records after this seq (the `next` of a page)' }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 5000, default: 1000 }),
});
export type TargetRecordsQuery = Static<typeof TargetRecordsQuery>;

export const TargetTimedRecord = Type.Object({
  targetTicks: Ticks('the target time, ticks of the segment'),
  targetSeconds: Seconds('targetTicks / tickRate; null without a tick rate'),
  record: TraceRecordRef,
});
export type TargetTimedRecord = Static<typeof TargetTimedRecord>;

export const TargetRecordsPage = Type.Object({
  session: Type.String(),
  segment: Type.Integer(),
  tickRate: TickRate,
  unit: Unit,
  records: Type.Array(TargetTimedRecord, { description: 'in target-time order (seq order)' }),
  next: Type.Union([Type.Integer(), Type.Null()], {
    description: '`afterSeq` of the next page of the window; null when this is its last',
  }),
});
export type TargetRecordsPage = Static<typeof TargetRecordsPage>;
