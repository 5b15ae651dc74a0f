import { httpErrors } from '@fastify/sensible';
import type { TSchema } from '@sinclair/typebox';
import { LinkIdParams, problemResponses } from '@tracehub/api-contract';
import { type Database, getLinkById, getLinkByName, type LinkRow } from '@tracehub/db';
import type { Kysely } from 'kysely';
import type { Scope } from '../config.js';

/** What a route on one link declares: its documentation, body and answers (the problems every route may give are added). */
interface LinkRouteSchema {
  summary: string;
  description?: string;
  tags: string[];
  body?: TSchema;
  response: Record<number, TSchema>;
}

/**
 * The options of a route on one link, `/links/{id}/...`: the link id parameter, the problems,
 * and the scope a token needs (default read).
 */
export function linkRoute<S extends LinkRouteSchema>(schema: S, scope: Scope = 'read') {
  return {
    config: { scope },
    schema: { ...schema, params: LinkIdParams, response: { ...schema.response, ...problemResponses } },
  };
}

/** The link of `id` (its number, or protocol.rig.link); a 404 saying where links are listed when there is none. */
export async function mustGetLink(db: Kysely<Database>, idText: number | string): Promise<LinkRow> {
  const id = typeof idText === 'string' && /^[0-9]+$/.test(idText) ? Number(idText) : idText;
  if (typeof id === 'number') {
    // Past a Postgres integer there is no such link (the route's pattern bounds the digits).
    if (id > 2147483647) throw httpErrors.notFound(`no link with id ${id}: GET /api/v1/links lists the links`);
    const link = await getLinkById(db, id);
    if (!link) throw httpErrors.notFound(`no link with id ${id}: GET /api/v1/links lists the links`);
    return link;
  }
  const [protocol, rig, name] = id.split('.');
  const link = await getLinkByName(db, rig, name);
  if (!link || link.protocol !== protocol)
    throw httpErrors.notFound(`no ${protocol} link ${rig}/${name}: GET /api/v1/links lists the links`);
  return link;
}
