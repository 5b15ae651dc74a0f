import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { gatewayErrors, MarkerReply, MarkerRequest, problemResponses, TimeBaseRequest } from '@tracehub/api-contract';
import type { Bus } from '@tracehub/bus';
import type { LinkMarker } from '@tracehub/contracts';
import type { Database } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { askGateway } from '../ask-gateway.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface LinkMarkerRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  timeoutMs: number;
}

/**
 * Markers on a live link, set through its gateway after every byte it has read, so that the
 * decoder puts them in their place in the stream (control scope):
 * `POST /links/{id}/markers` a user marker (STP: trace box marker 0x02 with the comment; QS: a
 * `TRACEHUB_NOTE` record), `POST /links/{id}/time-base` a new time base (STP only: the two
 * timebase markers 0x03, then output times on the new base).
 */
export const linkMarkerRoutes: FastifyPluginAsyncTypebox<LinkMarkerRoutesOptions> = async (
  app,
  { db, bus, timeoutMs },
) => {
  const errors = { 409: problemResponses[400], ...gatewayErrors };

  async function mark(id: number, marker: LinkMarker, stpOnly: boolean): Promise<MarkerReply> {
    const link = await mustGetLink(db, id);
    if (stpOnly && link.protocol === 'qs')
      throw httpErrors.conflict(`link ${link.rig}/${link.name} is qs; a time base is for STP and SWD links`);
    const reply = await askGateway(bus, { rig: link.rig, link: link.name }, { marker }, timeoutMs);
    if (!reply.ok || !reply.session)
      throw httpErrors.conflict(`the gateway could not set the marker: ${reply.error ?? 'no answer'}`);
    return { linkId: link.id, session: reply.session, marker };
  }

  app.post(
    '/links/:id/markers',
    linkRoute(
      {
        summary: 'Set a user marker on a live link, after every byte it has read',
        tags: ['control'],
        body: MarkerRequest,
        response: { 200: MarkerReply, ...errors },
      },
      'control',
    ),
    async (request) => {
      const { comment } = request.body;
      return mark(request.params.id, comment === undefined ? { kind: 'user' } : { kind: 'user', comment }, false);
    },
  );

  app.post(
    '/links/:id/time-base',
    linkRoute(
      {
        summary: "Set an STP link's time base (output time = receive time + offsetNs) from this point",
        tags: ['control'],
        body: TimeBaseRequest,
        response: { 200: MarkerReply, ...errors },
      },
      'control',
    ),
    async (request) => mark(request.params.id, { kind: 'timeBase', offsetNs: request.body.offsetNs }, true),
  );
};
