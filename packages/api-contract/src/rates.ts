import { type Static, Type } from '@sinclair/typebox';
import { Instant, LinkName, RigName } from './common.js';

const Counts = (description: string) => Type.Array(Type.Number({ minimum: 0 }), { description });

/** One link's series of `GET /rates`. */
export const LinkRates = Type.Object({
  rig: Type.String(),
  link: Type.String(),
  protocol: Type.String(),
  records: Counts('records per bucket'),
  recordsPerSecond: Counts('records per second of each bucket'),
  errors: Counts('error records per bucket'),
  gaps: Counts('sequence gaps per bucket'),
});
export type LinkRates = Static<typeof LinkRates>;

export const RatesQuery = Type.Object({
  rig: Type.Optional(RigName),
  link: Type.Optional(LinkName),
  from: Instant,
  to: Instant,
  buckets: Type.Integer({ minimum: 1, maximum: 1000, default: 120, description: 'slices of the range' }),
});

/** `GET /rates`: records/s, errors and gaps per link over a host-time range. */
export const RatesReply = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  bucketMs: Type.Number({ description: 'width of a slice (the last one ends at `to`)' }),
  times: Type.Array(Type.Number(), { description: 'start of each slice, ms since the epoch' }),
  links: Type.Array(LinkRates),
});
export type RatesReply = Static<typeof RatesReply>;
