import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Database, LinkSummary } from '@tracehub/db';
import { getRig, linkSummaries, listRigs } from '@tracehub/db';
import type { Kysely } from 'kysely';
import type { LiveHub } from '../live/live-hub.js';
import { problemResponses, RigName } from '../schemas.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface FleetRoutesOptions {
  db: Kysely<Database>;
  hub: LiveHub;
}

const Link = Type.Object({
  id: Type.Integer(),
  rig: Type.String(),
  name: Type.String(),
  protocol: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown()),
  sessions: Type.Integer(),
  records: Type.Integer({ description: 'records stored, over all sessions' }),
  errors: Type.Integer(),
  gaps: Type.Integer(),
  lostBytes: Type.Integer(),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'newest stored or live record',
  }),
  latestSession: Type.Union([Type.String(), Type.Null()]),
  recordsPerSecond: Type.Number({ description: 'live record rate over the last 10 s' }),
});

const Rig = Type.Object({
  name: Type.String(),
  firstSeen: Type.String({ format: 'date-time' }),
  lastSeen: Type.String({ format: 'date-time' }),
  links: Type.Array(Link),
});

/** Rigs, links and the fleet overview (stored totals plus live rates). */
export const fleetRoutes: FastifyPluginAsyncTypebox<FleetRoutesOptions> = async (app, { db, hub }) => {
  const withLive = (links: LinkSummary[]) => {
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
        response: { 200: Type.Object({ rigs: Type.Array(Rig) }), ...problemResponses },
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
        response: { 200: Type.Object({ links: Type.Array(Link) }), ...problemResponses },
      },
    },
    async (request) => ({ links: withLive(await linkSummaries(db, { rig: request.query.rig })) }),
  );

  app.get(
    '/links/:id',
    linkRoute({ summary: 'One link', tags: ['fleet'], response: { 200: Link } }),
    async (request) => {
      const link = await mustGetLink(db, request.params.id);
      const [summary] = withLive(await linkSummaries(db, { id: link.id }));
      return summary;
    },
  );
};
