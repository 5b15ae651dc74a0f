import { type Static, Type } from '@sinclair/typebox';
import { EmptyBody, Instant, LinkName, NullableInstant, RigName } from './common.js';

/** A session of `GET /sessions` and `GET /sessions/{id}`. */
export const Session = Type.Object({
  id: Type.String(),
  rig: Type.String(),
  link: Type.String(),
  protocol: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  endedAt: NullableInstant,
  firstRecordAt: NullableInstant,
  lastRecordAt: NullableInstant,
  records: Type.Integer(),
  errors: Type.Integer(),
  gaps: Type.Integer(),
  lostBytes: Type.Integer(),
  recordTotal: Type.Union([Type.Integer(), Type.Null()], { description: 'records in all, once the end was decoded' }),
  complete: Type.Boolean({ description: 'ended, and every record stored' }),
  recordsRefused: Type.Integer({
    description:
      'records the decoder published that Postgres refused as data: never stored, each batch kept as a loss (GET /sessions/{id}/losses); records + recordsRefused = recordTotal once complete or refused',
  }),
  targetInfo: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: 'what the target reported about itself (QS target info)',
  }),
});
export type Session = Static<typeof Session>;

/** The query of `GET /sessions`, pages of at most `maxPageSize`. */
export const sessionsQuery = (maxPageSize: number) =>
  Type.Object({
    rig: Type.Optional(RigName),
    link: Type.Optional(LinkName),
    from: Type.Optional(Instant),
    to: Type.Optional(Instant),
    limit: Type.Integer({ minimum: 1, maximum: maxPageSize, default: 50 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
  });

/** `GET /sessions`: a page, newest first. */
export const SessionsPage = Type.Object({
  sessions: Type.Array(Session),
  next: Type.Union([Type.String(), Type.Null()]),
});
export type SessionsPage = Static<typeof SessionsPage>;

/** The body of `POST /sessions/{id}/redecode`: none (read as `{}`), or an object with no fields. */
export const RedecodeRequest = EmptyBody;

/** `POST /sessions/{id}/redecode` (and `tracehub redecode`): what decoding a session again did. */
export const RedecodeResult = Type.Object({
  session: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "the settings it was decoded with: the link's current ones, with those the gateway sent with the session over them",
  }),
  chunks: Type.Integer(),
  bytes: Type.Integer({ description: 'link bytes decoded' }),
  records: Type.Integer(),
  errors: Type.Integer(),
  gaps: Type.Integer(),
  previousRecords: Type.Integer({ description: 'records the session had before' }),
  settingsRefused: Type.Optional(
    Type.String({
      description:
        "why the codec refused the link's settings (a .dic it cannot read): the session was decoded with the defaults (`settings` is `{}`), as the decoder service would",
    }),
  ),
  ms: Type.Number(),
});
export type RedecodeResult = Static<typeof RedecodeResult>;

/** `GET /sessions/{id}/dictionaries`. */
export const DictionariesReply = Type.Object({
  entries: Type.Array(Type.Object({ kind: Type.String(), key: Type.String(), name: Type.String() })),
});
export type DictionariesReply = Static<typeof DictionariesReply>;

const StepBase = {
  seq: Type.Integer({ description: 'seq of the record that starts the step' }),
  targetTs: Type.Union([Type.String(), Type.Null()]),
  hostNs: Type.String({ description: 'host receive time, ns since the epoch' }),
};

/** One arrow, fan-out or state change of a sequence diagram, in record order. */
export const SequenceStep = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('post'),
      ...StepBase,
      from: Type.String(),
      to: Type.String(),
      sig: Type.String(),
    },
    { description: 'a direct post (QS_QF_ACTIVE_POST, _LIFO)' },
  ),
  Type.Object(
    {
      kind: Type.Literal('timeout'),
      ...StepBase,
      from: Type.String({ description: 'the ticker that posted the time event (or the time event object)' }),
      to: Type.String(),
      sig: Type.String(),
      deliverySeq: Type.Union([Type.Integer(), Type.Null()], { description: 'seq of the AO-Post that delivered it' }),
    },
    { description: 'a time event (QS_QF_TIMEEVT_POST) with the AO-Post that delivered it, when seen' },
  ),
  Type.Object(
    {
      kind: Type.Literal('publish'),
      ...StepBase,
      from: Type.String(),
      sig: Type.String(),
      deliveries: Type.Array(Type.Object({ to: Type.String(), seq: Type.Integer() }), {
        description: 'the AO-Posts that delivered the event to each subscriber',
      }),
    },
    { description: 'a publish (QS_QF_PUBLISH)' },
  ),
  Type.Object({
    kind: Type.Literal('state'),
    ...StepBase,
    obj: Type.String(),
    from: Type.Union([Type.String(), Type.Null()], {
      description: 'QS_QEP_TRAN*: the source state; null for an initial transition (QS_QEP_INIT_TRAN)',
    }),
    to: Type.String(),
    sig: Type.Union([Type.String(), Type.Null()]),
  }),
]);
export type SequenceStep = Static<typeof SequenceStep>;

export const SequenceQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 20_000, default: 2000, description: 'steps per page' }),
  after: Type.Integer({
    minimum: -1,
    maximum: Number.MAX_SAFE_INTEGER,
    default: -1,
    description: 'start after this seq (`nextAfter` of a page)',
  }),
});

/** `GET /sessions/{id}/sequence`: a page of a QS session's sequence diagram. */
export const SequenceReply = Type.Object({
  session: Type.String(),
  participants: Type.Array(Type.String()),
  steps: Type.Array(SequenceStep),
  truncated: Type.Boolean(),
  nextAfter: Type.Union([Type.Integer(), Type.Null()], { description: '`after` of the next page' }),
});
export type SequenceReply = Static<typeof SequenceReply>;
