import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { Bus } from '@tracehub/bus';
import type { Database } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { askGateway, gatewayErrors } from '../ask-gateway.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface LinkConnectionRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  timeoutMs: number;
}

const ConnectionReply = Type.Object({
  linkId: Type.Integer(),
  targetConnected: Type.Boolean(),
  target: Type.Union(
    [
      Type.Object({
        address: Type.String({
          description: "the target's address:port (tcp, udp), or the device or file the link reads",
        }),
        since: Type.String({ format: 'date-time', description: 'when it connected' }),
      }),
      Type.Null(),
    ],
    { description: 'the target the open session reads from; null when none is connected' },
  ),
  session: Type.Union([Type.String(), Type.Null()], { description: 'the link session open now' }),
  source: Type.Object({
    kind: Type.String({ description: 'tcp-listen, tcp-connect, serial, udp, file or stdin' }),
    description: Type.String({ description: "the source as the gateway's log names it: tcp-listen 0.0.0.0:6601" }),
    secondTarget: Type.Optional(
      Type.Union([Type.Literal('replace'), Type.Literal('refuse')], {
        description: 'tcp-listen: a second target connecting replaces the first, or is refused',
      }),
    ),
    idleTimeoutMs: Type.Optional(
      Type.Integer({ description: 'tcp-listen: a connection that sends nothing this long is closed, ms (0: never)' }),
    ),
  }),
  notTaken: Type.Object(
    { refused: Type.Integer(), replaced: Type.Integer(), idleClosed: Type.Integer() },
    { description: 'connections refused, replaced by a newer one, or closed for silence since the gateway started' },
  ),
});

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
      response: { 200: ConnectionReply, ...gatewayErrors },
    }),
    async (request): Promise<Static<typeof ConnectionReply>> => {
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
        source: c.source as Static<typeof ConnectionReply>['source'],
        notTaken: c.notTaken,
      };
    },
  );
};
