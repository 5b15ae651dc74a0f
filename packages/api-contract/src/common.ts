import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  NAME_PATTERN,
  PROTOCOLS,
  problemResponses,
  RECORD_KINDS,
  type TraceRecord,
  TraceRecordSchema,
} from '@tracehub/contracts';

/** The shared TraceRecord schema, registered once on the app and referenced by id. */
export const TraceRecordRef = Type.Unsafe<TraceRecord>(Type.Ref(TraceRecordSchema.$id!));

export const RigName = Type.String({ pattern: NAME_PATTERN, description: 'rig name' });
export const LinkName = Type.String({ pattern: NAME_PATTERN, description: 'link name' });
/** Text parameters reach Postgres, which takes no NUL byte in text. */
export const NO_NUL = '^[^\\u0000]*$';
const text = (options: { minLength: number; maxLength: number; description: string }) =>
  Type.String({ ...options, pattern: NO_NUL });

/** The body of a POST or DELETE that takes none: no body (read as `{}`), or an object with no fields. */
export const EmptyBody = Type.Object(
  {},
  { additionalProperties: false, description: 'no fields: send no body, or {}' },
);

/** `/links/{id}/...`: a link's id, or its name as protocol.rig.link (`qs.rig1.uart0`), the form the CLI and logs use. */
export const LinkIdParams = Type.Object({
  // One text pattern rather than a union of an integer and a name: a union left the text
  // `1e309` to the integer branch's coercion (Infinity), past the numeric rule.
  id: Type.String({
    pattern: '^([1-9][0-9]{0,9}|(qs|stp|swd)\\.[A-Za-z0-9_-]{1,64}\\.[A-Za-z0-9_-]{1,64})$',
    maxLength: 200,
    description: 'an integer link id from 1 (decimal digits), or protocol.rig.link such as qs.rig1.uart0',
  }),
});

export const SessionId = text({ minLength: 1, maxLength: 64, description: 'session id' });
/** `/sessions/{id}/...`: a session's id. */
export const SessionParams = Type.Object({ id: SessionId });

export const Instant = Type.String({
  format: 'date-time',
  description: 'an instant, RFC 3339 (2025-11-24T16:00:00.123Z)',
});
/** An instant in a reply, or null where there is none yet. */
export const NullableInstant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
/** ns since the Unix epoch as decimal text: past 2^53, so not a JSON number. */
export const NsText = (description: string) => Type.String({ pattern: '^[0-9]{1,20}$', description });

/** A list parameter: `?kind=error&kind=record` or `?kind=error,record`. */
function list<T extends TSchema>(item: T, description: string) {
  return Type.Array(item, { maxItems: 50, description });
}

/** The record filters, shared by records pages, exports and the live tail. */
export const RecordFilterQuery = Type.Object({
  rig: Type.Optional(RigName),
  link: Type.Optional(LinkName),
  session: Type.Optional(SessionId),
  protocol: Type.Optional(Type.Union(PROTOCOLS.map((p) => Type.Literal(p)))),
  name: Type.Optional(
    list(
      text({ minLength: 1, maxLength: 100, description: 'record name' }),
      'record names (QS_QEP_TRAN, PHILO_STAT, STP_MESSAGE, ...)',
    ),
  ),
  type: Type.Optional(list(Type.Integer({ minimum: 0, maximum: 0xffff }), 'numeric record types')),
  kind: Type.Optional(list(Type.Union(RECORD_KINDS.map((k) => Type.Literal(k))), 'record kinds')),
  obj: Type.Optional(text({ minLength: 1, maxLength: 200, description: 'QS object' })),
  sig: Type.Optional(text({ minLength: 1, maxLength: 200, description: 'QS signal' })),
  prio: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: 'QS active-object priority' })),
  master: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffff, description: 'STP master' })),
  channel: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffff, description: 'STP channel' })),
  text: Type.Optional(text({ minLength: 1, maxLength: 200, description: 'case-insensitive substring of the text' })),
});
export type RecordFilterQuery = Static<typeof RecordFilterQuery>;

export const TimeRangeQuery = Type.Object({
  from: Type.Optional(Instant),
  to: Type.Optional(Instant),
});
export type TimeRangeQuery = Static<typeof TimeRangeQuery>;

/** The problems of a route that asks a link's gateway: it failed (502), there is none (503), or it did not answer in time (504). */
export const gatewayErrors = {
  502: problemResponses[400],
  503: problemResponses[400],
  504: problemResponses[400],
};

export { problemResponses };
