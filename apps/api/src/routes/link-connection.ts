import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { gatewayErrors, LinkConnection } from '@tracehub/api-contract';
import type { Bus } from '@tracehub/bus';
import type { Database } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { askGateway } from '../ask-gateway.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface LinkConnectionRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  timeoutMs: number;
}

/**
 * `GET /links/{id}/connection`: how the link's gateway is connected to the target, for any
 * protocol: read scope, since it only reads (503 when no gateway serves the link).
 */
export const linkConnectionRoutes: FastifyPluginAsyncTypebox<LinkConnectionRoutesOptions> = async (
  app,
  { db, bus, timeoutMs },
) => {
  app.get(
    '/links/:id/connection',
    linkRoute({
      summary: "How a link's gateway is connected: its source, the target and since when, connections not taken",
      tags: ['links'],
      response: { 200: LinkConnection, ...gatewayErrors },
    }),
    async (request): Promise<LinkConnection> => {
      const link = await mustGetLink(db, request.params.id);
      const reply = await askGateway(bus, { rig: link.rig, link: link.name }, { connection: true }, timeoutMs);
      const c = reply.connection;
      if (!reply.ok || !c)
        throw httpErrors.badGateway(`the gateway did not say how the link is connected: ${reply.error ?? 'no answer'}`);
      return {
        linkId: link.id,
        targetConnected: c.target !== null,
        target: c.target && { address: c.target.address, since: new Date(c.target.sinceMs).toISOString() },
        session: reply.session ?? null,
        source: c.source as LinkConnection['source'],
        notTaken: c.notTaken,
      };
    },
  );
};
