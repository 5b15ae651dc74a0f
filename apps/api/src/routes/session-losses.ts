import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses, SessionLosses, SessionParams } from '@tracehub/api-contract';
import { type Database, getSession, sessionRecordLosses } from '@tracehub/db';
import type { Kysely } from 'kysely';

/**
 * `GET /sessions/{id}/losses`: the records of a session storage could not store (Postgres
 * refused them as data), one entry per message, so a session whose stored records fall short
 * of its total says where and why.
 */
export const sessionLossesRoutes: FastifyPluginAsyncTypebox<{ db: Kysely<Database> }> = async (app, { db }) => {
  app.get(
    '/sessions/:id/losses',
    {
      schema: {
        summary: 'Records of the session that storage could not store, and why',
        tags: ['sessions'],
        params: SessionParams,
        response: { 200: SessionLosses, ...problemResponses },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await getSession(db, id))) throw httpErrors.notFound(`no session ${id}`);
      const rows = await sessionRecordLosses(db, id);
      return {
        losses: rows.map((l) => ({
          chunk: l.chunk,
          firstSeq: l.first_seq === null ? null : Number(l.first_seq),
          lastSeq: l.last_seq === null ? null : Number(l.last_seq),
          records: l.records,
          reason: l.reason,
          lostAt: l.lost_at.toISOString(),
        })),
      };
    },
  );
};
