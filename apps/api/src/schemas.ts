import { httpErrors } from '@fastify/sensible';
import type { RecordFilterQuery, TimeRangeQuery } from '@tracehub/api-contract';
import type { RecordFilter } from '@tracehub/db';

/*
 * What the server makes of the contract's request schemas (`@tracehub/api-contract`): the
 * schemas say what a request may hold, these functions what it means to the queries.
 */

export type FilterQuery = RecordFilterQuery & TimeRangeQuery;

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

/** The largest host time Postgres stores (a bigint of ns since the epoch). */
const MAX_NS = 9_223_372_036_854_775_807n;

/**
 * ns since the epoch, given as decimal text (the schema's pattern), as a bigint: text past
 * Postgres's bigint is a 400 naming the parameter, as the numeric rule answers any number out of range.
 */
export function nsOf(name: string, value: string | undefined): bigint | undefined {
  if (value === undefined) return undefined;
  const ns = BigInt(value);
  if (ns > MAX_NS)
    throw httpErrors.badRequest(
      `querystring ${name}: must be ns since the Unix epoch, an integer from 0 to ${MAX_NS} in decimal digits`,
    );
  return ns;
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
