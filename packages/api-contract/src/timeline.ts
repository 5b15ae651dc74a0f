import { type Static, Type } from '@sinclair/typebox';
import { NsText, SessionId } from './common.js';

const Ns = NsText('ns since the Unix epoch (host time)');
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const TimelineQuery = Type.Object({
  session: Type.Array(SessionId, { minItems: 1, maxItems: 8, description: 'sessions to show, on one axis' }),
  from: Type.Optional(Ns),
  to: Type.Optional(Ns),
  buckets: Type.Integer({
    minimum: 10,
    maximum: 4000,
    default: 1000,
    description: 'slices of the window when counting',
  }),
  detail: Type.Integer({
    minimum: 0,
    maximum: 20_000,
    default: 5000,
    description: 'most records returned one by one per session',
  }),
});

/** Records of a track counted in one slice of the window. */
export const TimelineBucket = Type.Object({
  track: NullableString,
  bucket: Type.Integer(),
  records: Type.Integer(),
  errors: Type.Integer(),
});
export type TimelineBucket = Static<typeof TimelineBucket>;

/** Where a record of a lane is: its seq, its host time (ns, decimal) and its target time. */
const RecordPlace = {
  seq: Type.Integer(),
  hostNs: Type.String(),
  targetTs: NullableString,
};

/** One record of the window, as a timeline draws it. */
export const TimelineItem = Type.Object({
  track: NullableString,
  ...RecordPlace,
  kind: Type.String(),
  name: Type.String(),
  sig: NullableString,
  state: NullableString,
  text: Type.String(),
});
export type TimelineItem = Static<typeof TimelineItem>;

/** An active object entering a state. */
export const TimelineStateChange = Type.Object({ track: Type.String(), ...RecordPlace, state: Type.String() });
export type TimelineStateChange = Static<typeof TimelineStateChange>;

/** One session's lane of `GET /timeline`. */
export const TimelineLane = Type.Object({
  session: Type.String(),
  rig: Type.String(),
  link: Type.String(),
  protocol: Type.String(),
  /** The session's own span, host time. */
  fromNs: Type.String(),
  toNs: Type.String(),
  detail: Type.Boolean({ description: 'items holds every record of the window; otherwise buckets count them' }),
  sampleEvery: Type.Integer({ description: 'buckets counted every n-th record (scaled by n); 1: exact' }),
  buckets: Type.Array(TimelineBucket),
  items: Type.Array(TimelineItem),
  states: Type.Array(TimelineStateChange, {
    description: 'state changes of the window, after the last one of each object before it',
  }),
});
export type TimelineLane = Static<typeof TimelineLane>;

/** `GET /timeline`: link sessions on one host-time axis. */
export const Timeline = Type.Object({
  fromNs: Type.String(),
  toNs: Type.String(),
  bucketNs: Type.String(),
  lanes: Type.Array(TimelineLane),
});
export type Timeline = Static<typeof Timeline>;
