import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { LinkSummary, LinksReply, problemResponses, Rig, RigName, RigsReply } from '@tracehub/api-contract';
import type { Database, LinkSummary as StoredLinkSummary } from '@tracehub/db';
import { getRig, linkSummaries, listRigs } from '@tracehub/db';
import type { Kysely } from 'kysely';
import type { LiveHub } from '../live/live-hub.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface FleetRoutesOptions {
  db: Kysely<Database>;
  hub: LiveHub;
}

/** Rigs, links and the fleet overview (stored totals plus live rates). */
export const fleetRoutes: FastifyPluginAsyncTypebox<FleetRoutesOptions> = async (app, { db, hub }) => {
  const withLive = (links: StoredLinkSummary[]): LinkSummary[] => {
    const live = new Map(hub.linkRates().map((r) => [`${r.rig}/${r.link}`, r]));
    return links.map((l) => {
      const rate = live.get(`${l.rig}/${l.name}`);
      const stored = l.lastSeen?.toISOString() ?? null;
      const lastSeen = rate && (stored === null || rate.lastSeen > stored) ? rate.lastSeen : stored;
      return {
        ...l,
        records: Number(l.records),
        errors: Number(l.errors),
        gaps: Number(l.gaps),
        lostBytes: Number(l.lostBytes),
        lastSeen,
        recordsPerSecond: rate?.recordsPerSecond ?? 0,
      };
    });
  };

  app.get(
    '/rigs',
    {
      schema: {
        summary: 'Every rig with its links (the fleet page)',
        tags: ['fleet'],
        response: { 200: RigsReply, ...problemResponses },
      },
    },
    async () => {
      const [rigs, links] = await Promise.all([listRigs(db), linkSummaries(db)]);
      const all = withLive(links);
      return {
        rigs: rigs.map((r) => ({
          name: r.name,
          firstSeen: r.first_seen.toISOString(),
          lastSeen: r.last_seen.toISOString(),
          links: all.filter((l) => l.rig === r.name),
        })),
      };
    },
  );

  app.get(
    '/rigs/:rig',
    {
      schema: {
        summary: 'One rig with its links',
        tags: ['fleet'],
        params: Type.Object({ rig: RigName }),
        response: { 200: Rig, ...problemResponses },
      },
    },
    async (request) => {
      const rig = await getRig(db, request.params.rig);
      if (!rig) throw httpErrors.notFound(`no rig named ${request.params.rig}`);
      return {
        name: rig.name,
        firstSeen: rig.first_seen.toISOString(),
        lastSeen: rig.last_seen.toISOString(),
        links: withLive(await linkSummaries(db, { rig: rig.name })),
      };
    },
  );

  app.get(
    '/links',
    {
      schema: {
        summary: 'Every link, with totals and live rate',
        tags: ['fleet'],
        querystring: Type.Object({ rig: Type.Optional(RigName) }),
        response: { 200: LinksReply, ...problemResponses },
      },
    },
    async (request) => ({ links: withLive(await linkSummaries(db, { rig: request.query.rig })) }),
  );

  app.get(
    '/links/:id',
    linkRoute({ summary: 'One link', tags: ['fleet'], response: { 200: LinkSummary } }),
    async (request) => {
      const link = await mustGetLink(db, request.params.id);
      const [summary] = withLive(await linkSummaries(db, { id: link.id }));
      return summary;
    },
  );
};
