import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { NAME_PATTERN, PROTOCOLS, RECORD_KINDS, type TraceRecord, TraceRecordSchema } from '@tracehub/contracts';
import type { RecordFilter } from '@tracehub/db';
import { badRequest } from './plugins/problems.js';

/** The shared TraceRecord schema, registered once on the app and referenced by id. */
export const TraceRecordRef = Type.Unsafe<TraceRecord>(Type.Ref(TraceRecordSchema.$id!));

export const RigName = Type.String({ pattern: NAME_PATTERN, description: 'rig name' });
export const LinkName = Type.String({ pattern: NAME_PATTERN, description: 'link name' });
export const SessionId = Type.String({ minLength: 1, maxLength: 64, description: 'session id' });
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
    list(Type.String({ minLength: 1, maxLength: 100 }), 'record names (QS_QEP_TRAN, PHILO_STAT, STP_MESSAGE, ...)'),
  ),
  type: Type.Optional(list(Type.Integer({ minimum: 0, maximum: 0xffff }), 'numeric record types')),
  kind: Type.Optional(list(Type.Union(RECORD_KINDS.map((k) => Type.Literal(k))), 'record kinds')),
  obj: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'QS object' })),
  sig: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'QS signal' })),
  prio: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: 'QS active-object priority' })),
  master: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffff, description: 'STP master' })),
  channel: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffff, description: 'STP channel' })),
  text: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'case-insensitive substring of the text' }),
  ),
});
export type RecordFilterQuery = Static<typeof RecordFilterQuery>;

export const TimeRangeQuery = Type.Object({
  from: Type.Optional(Instant),
  to: Type.Optional(Instant),
});

export type FilterQuery = RecordFilterQuery & Partial<Static<typeof TimeRangeQuery>>;

/** Query parameters into a db filter; checks what a schema cannot (from before to). */
export function toRecordFilter(q: FilterQuery): RecordFilter {
  const from = q.from === undefined ? undefined : new Date(q.from);
  const to = q.to === undefined ? undefined : new Date(q.to);
  if (from && to && from.getTime() > to.getTime()) throw badRequest('querystring: from is after to');
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
