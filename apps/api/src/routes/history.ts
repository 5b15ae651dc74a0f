import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type Database, historyRange } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { problemResponses } from '../schemas.js';

export interface HistoryRoutesOptions {
  db: Kysely<Database>;
}

const nullableInstant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** How far back stored history goes, and the retention that bounds it. */
export const historyRoutes: FastifyPluginAsyncTypebox<HistoryRoutesOptions> = async (app, { db }) => {
  app.get(
    '/history',
    {
      schema: {
        summary: 'How far back stored history goes',
        description:
          "The oldest and newest stored records' host times, and the deployment's retention (storage's STORAGE_RETENTION_DAYS, applied by dropping whole days).",
        tags: ['fleet'],
        response: {
          200: Type.Object({
            from: nullableInstant,
            to: nullableInstant,
            retentionDays: Type.Union([Type.Integer(), Type.Null()], { description: 'null: history is kept for ever' }),
            retentionAppliedAt: nullableInstant,
          }),
          ...problemResponses,
        },
      },
    },
    async () => {
      const h = await historyRange(db);
      return {
        from: h.from?.toISOString() ?? null,
        to: h.to?.toISOString() ?? null,
        retentionDays: h.retentionDays,
        retentionAppliedAt: h.retentionAppliedAt?.toISOString() ?? null,
      };
    },
  );
};
