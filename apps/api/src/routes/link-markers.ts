import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  gatewayErrors,
  MarkerReply,
  MarkerRequest,
  problemResponses,
  TimeBaseRequest,
  UploadReply,
  UploadRequest,
} from '@tracehub/api-contract';
import type { LinkMarker } from '@tracehub/contracts';
import { askGateway } from '../ask-gateway.js';
import type { LinkConnectionRoutesOptions } from './link-connection.js';
import { linkRoute, mustGetLink } from './link-route.js';

/** What the link connection routes take: the database, the bus, how long a gateway may take. */
export type LinkMarkerRoutesOptions = LinkConnectionRoutesOptions;

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

  async function mark(id: number | string, marker: LinkMarker, stpOnly: boolean): Promise<MarkerReply> {
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

  app.post(
    '/links/:id/upload',
    linkRoute(
      {
        summary: "Send data to a link's device: STP links by the trace box's UART upload, SWD links as one SWD frame",
        description:
          'STP: break, bit rate, length and data with their acknowledgements; the reply says how it went: `uploaded`, or the rule of reference §3.1 it failed on (200 either way: the gateway did its part). SWD (§3.2.5): the data framed C0 … C1 with escapes, padded with C1 to 4-byte words.',
        tags: ['control'],
        body: UploadRequest,
        response: { 200: UploadReply, ...errors },
      },
      'control',
    ),
    async (request): Promise<UploadReply> => {
      const link = await mustGetLink(db, request.params.id);
      if (link.protocol === 'qs')
        throw httpErrors.conflict(`link ${link.rig}/${link.name} is qs; uploads are for STP (UART) and SWD links`);
      const data = Buffer.from(request.body.data, 'base64');
      if (data.length === 0 || data.length > 512 * 1024)
        throw httpErrors.badRequest('body data: base64 of 1..524288 bytes');
      // Break, 2 s for the bit rate, 100 ms per acknowledgement, and the data at the slowest rate.
      const reply = await askGateway(
        bus,
        { rig: link.rig, link: link.name },
        { upload: data },
        Math.min(600_000, timeoutMs + 3000 + Math.ceil((data.length * 10 * 1000) / 100)),
      );
      const r = reply.result as Omit<UploadReply, 'linkId' | 'session'> | undefined;
      if (!r) throw httpErrors.conflict(`the gateway could not upload: ${reply.error ?? 'no answer'}`);
      return { linkId: link.id, session: reply.session ?? null, ...r };
    },
  );
};
