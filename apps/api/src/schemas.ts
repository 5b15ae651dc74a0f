import { httpErrors } from '@fastify/sensible';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { NAME_PATTERN, PROTOCOLS, RECORD_KINDS, type TraceRecord, TraceRecordSchema } from '@tracehub/contracts';
import type { RecordFilter } from '@tracehub/db';

/** The shared TraceRecord schema, registered once on the app and referenced by id. */
export const TraceRecordRef = Type.Unsafe<TraceRecord>(Type.Ref(TraceRecordSchema.$id!));

export const RigName = Type.String({ pattern: NAME_PATTERN, description: 'rig name' });
export const LinkName = Type.String({ pattern: NAME_PATTERN, description: 'link name' });
/** Text parameters reach Postgres, which takes no NUL byte in text. */
export const NO_NUL = '^[^\\u0000]*$';
const text = (options: { minLength: number; maxLength: number; description: string }) =>
  Type.String({ ...options, pattern: NO_NUL });

/** `/links/{id}/...`: a link's id. */
export const LinkIdParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'link id' }),
});

export const SessionId = text({ minLength: 1, maxLength: 64, description: 'session id' });
export const Instant = Type.String({
  format: 'date-time',
  description: 'an instant, RFC 3339 (2025-11-24T16:00:00.123Z)',
});

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

export type FilterQuery = RecordFilterQuery & Partial<Static<typeof TimeRangeQuery>>;

/**
 * An RFC 3339 instant as a Date. The schema's format admits what JavaScript cannot represent
 * (a leap second, 23:59:60): that is a 400 naming the parameter, not a date Postgres refuses.
 */
export function instantOf(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() > 9999)
    throw httpErrors.badRequest(
      `querystring ${name}: ${JSON.stringify(value)} is not an instant this server can use (no leap seconds; years up to 9999); send e.g. 2026-01-01T23:59:59Z`,
    );
  return date;
}

/** Query parameters into a db filter; checks what a schema cannot (from before to). */
export function toRecordFilter(q: FilterQuery): RecordFilter {
  const from = instantOf('from', q.from);
  const to = instantOf('to', q.to);
  if (from && to && from.getTime() > to.getTime()) throw httpErrors.badRequest('querystring: from is after to');
  return {
    rig: q.rig,
    link: q.link,
    session: q.session,
    protocol: q.protocol,
    from,
    to,
    names: q.name,
    types: q.type,
    kinds: q.kind,
    qsObj: q.obj,
    qsSig: q.sig,
    qsPrio: q.prio,
    stpMaster: q.master,
    stpChannel: q.channel,
    text: q.text,
  };
}

/** Splits comma-separated values of list parameters before validation (`?kind=a,b`). */
export function splitListParams(query: Record<string, unknown>): void {
  for (const key of ['name', 'type', 'kind']) {
    const v = query[key];
    if (typeof v === 'string' && v.includes(',')) query[key] = v.split(',').filter((s) => s !== '');
    else if (Array.isArray(v)) query[key] = v.flatMap((s) => (typeof s === 'string' ? s.split(',') : [s]));
  }
}

export { problemResponses } from '@tracehub/contracts';
