import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type Database, getSession, sessionRecordLosses } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { problemResponses, SessionId } from '../schemas.js';

const RecordLoss = Type.Object({
  chunk: Type.Integer({ description: 'the raw chunk whose records they were' }),
  firstSeq: Type.Union([Type.Integer(), Type.Null()]),
  lastSeq: Type.Union([Type.Integer(), Type.Null()]),
  records: Type.Integer(),
  reason: Type.String({ description: 'what Postgres (or the reader) said was wrong with them' }),
  lostAt: Type.String({ format: 'date-time' }),
});

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
        params: Type.Object({ id: SessionId }),
        response: { 200: Type.Object({ losses: Type.Array(RecordLoss) }), ...problemResponses },
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
