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

/** How a reply's target times read: the tick rate, and the unit it gives. */
const TargetAxis = { tickRate: TickRate, unit: Unit };

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
  ...TargetAxis,
  untimed: Type.Integer({
    description: 'records with no target time (stored before target times were kept, or before the first stamp)',
  }),
  segments: Type.Array(TargetSegment),
});
export type SessionTargetTime = Static<typeof SessionTargetTime>;

/** A time on the target's axis: whole ticks, or seconds (with a fraction) when `unit=s`. */
const AxisTime = (description: string) =>
  Type.String({ pattern: '^[0-9]{1,20}(\\.[0-9]{1,12})?$', maxLength: 33, description });

/** A window of one target segment's time, in ticks or seconds: the query parameters of the views on target time. */
const targetWindow = (from: string, to: string) => ({
  segment: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'the target segment' }),
  from: Type.Optional(AxisTime(from)),
  to: Type.Optional(AxisTime(to)),
  unit: Type.Union([Type.Literal('ticks'), Type.Literal('s')], {
    default: 'ticks',
    description: "what `from` and `to` count: ticks, or seconds (the link's tick rate must be set)",
  }),
});

/** `GET /sessions/{id}/target-records`: a window of target time. */
export const TargetRecordsQuery = Type.Object({
  ...targetWindow('start of the window (inclusive), in `unit`', 'end of the window (exclusive), in `unit`'),
  afterSeq: Type.Optional(
    Type.Integer({
      minimum: -1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'keyset: records after this seq (the `next` of a page)',
    }),
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
  ...TargetAxis,
  records: Type.Array(TargetTimedRecord, { description: 'in target-time order (seq order)' }),
  next: Type.Union([Type.Integer(), Type.Null()], {
    description: '`afterSeq` of the next page of the window; null when this is its last',
  }),
});
export type TargetRecordsPage = Static<typeof TargetRecordsPage>;

/** `NAME:field`: a record name and a dotted path in its fields (`PHILO_STAT:values.0`). */
export const SERIES_PATTERN = '^[^:\\u0000]{1,100}:[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*$';

/** `GET /sessions/{id}/series`: numeric fields of records, over target time. */
export const SeriesQuery = Type.Object({
  series: Type.Array(
    Type.String({
      maxLength: 200,
      pattern: SERIES_PATTERN,
      description:
        "`NAME:field`: the records named NAME (a QS user record such as PHILO_STAT, a predefined record, STP_MESSAGE...) and a dotted path in their fields (`values.0` is a QS user record's first argument)",
    }),
    { minItems: 1, maxItems: 8, description: 'the series, `?series=A:f&series=B:g`' },
  ),
  ...targetWindow(
    'start of the window (inclusive), in `unit`; default: the first value of any series',
    'end of the window (exclusive), in `unit`; default: just after the last value of any series',
  ),
  columns: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 800,
    description: 'pixel columns to cut the window into (min and max of each)',
  }),
});
export type SeriesQuery = Static<typeof SeriesQuery>;

export const SeriesColumn = Type.Object({
  column: Type.Integer({ description: 'pixel column, 0 at `fromTicks`' }),
  fromTicks: Ticks('start of the column (inclusive)'),
  toTicks: Ticks('end of the column (exclusive)'),
  fromSeconds: Seconds('fromTicks / tickRate; null without a tick rate'),
  count: Type.Integer(),
  min: Type.Number(),
  max: Type.Number(),
  first: Type.Number({ description: 'first value of the column in time order' }),
  last: Type.Number({ description: 'last value of the column in time order' }),
});
export type SeriesColumn = Static<typeof SeriesColumn>;

/** One series of a `GET /sessions/{id}/series` reply. */
export const ValueSeries = Type.Object({
  name: Type.String(),
  field: Type.String(),
  points: Type.Integer({ description: 'values in the window' }),
  skipped: Type.Integer({ description: 'records of the name whose field is missing or not a number' }),
  min: Type.Union([Type.Number(), Type.Null()]),
  max: Type.Union([Type.Number(), Type.Null()]),
  columns: Type.Array(SeriesColumn, { description: 'the columns holding values, in order' }),
});
export type ValueSeries = Static<typeof ValueSeries>;

export const SeriesReply = Type.Object({
  session: Type.String(),
  ...TargetAxis,
  segment: Type.Integer(),
  fromTicks: Type.Union([Ticks('window start'), Type.Null()], { description: 'null when every series is empty' }),
  toTicks: Type.Union([Ticks('window end (exclusive)'), Type.Null()]),
  columns: Type.Integer({ description: 'the pixel columns the window is cut into' }),
  series: Type.Array(ValueSeries, { description: 'in the order asked for' }),
});
export type SeriesReply = Static<typeof SeriesReply>;

/** `GET /sessions/{id}/target-timeline`: a timeline of one target segment. */
export const TargetTimelineQuery = Type.Object({
  ...targetWindow(
    "start of the window (inclusive), in `unit`; default: the segment's first record",
    "end of the window (exclusive), in `unit`; default: just after the segment's last record",
  ),
  buckets: Type.Integer({ minimum: 1, maximum: 10_000, default: 1000, description: 'equal slices of the window' }),
  detail: Type.Integer({
    minimum: 0,
    maximum: 5000,
    default: 5000,
    description: 'a window of at most this many records comes with the records themselves',
  }),
});
export type TargetTimelineQuery = Static<typeof TargetTimelineQuery>;

const Count = (description?: string) => Type.Integer({ minimum: 0, description });

export const TargetTimelineLane = Type.Object({
  track: Type.Union([Type.String(), Type.Null()], {
    description: 'the QS active object, the STP master/channel, or null for the link itself',
  }),
  records: Count('records of the lane in the window'),
  errors: Count(),
  buckets: Type.Array(Type.Object({ bucket: Count('slice, 0 at fromTicks'), records: Count(), errors: Count() }), {
    description: 'the slices holding records of the lane, in order',
  }),
});

export const TargetTimelineItem = Type.Object({
  track: Type.Union([Type.String(), Type.Null()]),
  seq: Type.Integer(),
  targetTicks: Ticks('the target time, ticks of the segment'),
  targetSeconds: Seconds('targetTicks / tickRate; null without a tick rate'),
  hostNs: NsText('host receive time'),
  kind: Type.String(),
  name: Type.String(),
  sig: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.String(), Type.Null()], { description: 'the state a transition record enters' }),
  text: Type.String(),
});

export const TargetTimelineReply = Type.Object({
  session: Type.String(),
  segment: Type.Integer(),
  ...TargetAxis,
  fromTicks: Type.Union([Ticks('window start'), Type.Null()], { description: 'null when the segment has no record' }),
  toTicks: Type.Union([Ticks('window end (exclusive)'), Type.Null()]),
  fromSeconds: Seconds('fromTicks / tickRate'),
  toSeconds: Seconds('toTicks / tickRate'),
  bucketTicks: Ticks('width of a slice'),
  records: Count('records of the window (exact)'),
  errors: Count(),
  lanes: Type.Array(TargetTimelineLane),
  items: Type.Union([Type.Array(TargetTimelineItem), Type.Null()], {
    description: 'the records of the window in target-time order when there are at most `detail`; else null',
  }),
});
export type TargetTimelineReply = Static<typeof TargetTimelineReply>;
