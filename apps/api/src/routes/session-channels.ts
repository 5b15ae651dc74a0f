import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SessionChannels } from '@tracehub/api-contract';
import { type Database, sessionChannels } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { scanSession, sessionScanRoute } from './session-scan.js';

export interface SessionChannelsRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

/** An STP (or SWD) session's masters and channels: the tree of the session page. */
export const sessionChannelsRoutes: FastifyPluginAsyncTypebox<SessionChannelsRoutesOptions> = async (
  app,
  { db, scanLimitBytes },
) => {
  app.get(
    '/sessions/:id/channels',
    sessionScanRoute({
      summary: "An STP session's records per master and channel, and its errors by name",
      description:
        "Per STP master and channel: records, error records, the host-time span and the record names seen; the session's error records (on a channel or of the stream itself) counted by name; and the records on no channel (markers, stream errors). Every record of the session is read (`x-tracehub-scanned-bytes` says how many bytes); past `API_SCAN_LIMIT_MB` it is a 422. QS sessions have no masters or channels: 400.",
      querystring: Type.Object({}),
      reply: SessionChannels,
    }),
    async (request, reply) =>
      scanSession(db, request.params.id, scanLimitBytes, reply, {
        protocols: ['stp', 'swd'],
        notFor: (session) => `session ${session.id} is qs: masters and channels are STP's (stp and swd sessions)`,
        read: (session, budget) => sessionChannels(db, session.id, { budget }),
      }),
  );
};
