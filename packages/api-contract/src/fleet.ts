import { type Static, Type } from '@sinclair/typebox';
import { NullableInstant } from './common.js';

/**
 * A link of `GET /rigs`, `GET /links` and `GET /links/{id}`: its stored totals (counts as
 * numbers, the newest record's time as RFC 3339 text) with its live record rate.
 */
export const LinkSummary = Type.Object({
  id: Type.Integer(),
  rig: Type.String(),
  name: Type.String(),
  protocol: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown()),
  sessions: Type.Integer(),
  records: Type.Integer({ description: 'records stored, over all sessions' }),
  errors: Type.Integer(),
  gaps: Type.Integer(),
  lostBytes: Type.Integer(),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'newest stored or live record',
  }),
  latestSession: Type.Union([Type.String(), Type.Null()]),
  recordsPerSecond: Type.Number({ description: 'live record rate over the last 10 s' }),
});
export type LinkSummary = Static<typeof LinkSummary>;

/** A rig of `GET /rigs` and `GET /rigs/{rig}`, with its links. */
export const Rig = Type.Object({
  name: Type.String(),
  firstSeen: Type.String({ format: 'date-time' }),
  lastSeen: Type.String({ format: 'date-time' }),
  links: Type.Array(LinkSummary),
});
export type Rig = Static<typeof Rig>;

/** `GET /rigs`. */
export const RigsReply = Type.Object({ rigs: Type.Array(Rig) });
export type RigsReply = Static<typeof RigsReply>;

/** `GET /links`. */
export const LinksReply = Type.Object({ links: Type.Array(LinkSummary) });
export type LinksReply = Static<typeof LinksReply>;

/** `GET /history`: how far back stored history goes. */
export const HistoryReply = Type.Object({
  from: NullableInstant,
  to: NullableInstant,
  retentionDays: Type.Union([Type.Integer(), Type.Null()], { description: 'null: history is kept for ever' }),
  retentionAppliedAt: NullableInstant,
});
export type HistoryReply = Static<typeof HistoryReply>;
