import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type Database, sessionChannels } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { scanSession, sessionScanRoute } from './session-scan.js';

export interface SessionChannelsRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

const Ns = Type.String({ pattern: '^[0-9]{1,20}$', description: 'host receive time, ns since the Unix epoch' });

const Channel = Type.Object({
  channel: Type.Integer(),
  records: Type.Integer(),
  errors: Type.Integer({
    description: 'error records on the channel (a message discarded, left open at the end, ...)',
  }),
  firstHostNs: Ns,
  lastHostNs: Ns,
  names: Type.Array(Type.String(), { description: 'record names seen on the channel, sorted' }),
});

const Master = Type.Object({
  master: Type.Integer(),
  records: Type.Integer(),
  errors: Type.Integer(),
  channels: Type.Array(Channel, { description: 'by channel number' }),
});

const ChannelsReply = Type.Object({
  session: Type.String(),
  records: Type.Integer({ description: 'records of the session, addressed or not' }),
  unaddressed: Type.Integer({ description: 'records on no master/channel (markers, stream errors)' }),
  masters: Type.Array(Master, { description: 'by master number' }),
  errors: Type.Array(Type.Object({ name: Type.String(), count: Type.Integer() }), {
    description: 'error records by name, most frequent first',
  }),
});

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
      reply: ChannelsReply,
    }),
    async (request, reply) =>
      scanSession(db, request.params.id, scanLimitBytes, reply, {
        protocols: ['stp', 'swd'],
        notFor: (session) => `session ${session.id} is qs: masters and channels are STP's (stp and swd sessions)`,
        read: (session, budget) => sessionChannels(db, session.id, { budget }),
      }),
  );
};
