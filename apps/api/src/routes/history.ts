import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HistoryReply, problemResponses } from '@tracehub/api-contract';
import { type Database, historyRange } from '@tracehub/db';
import type { Kysely } from 'kysely';

export interface HistoryRoutesOptions {
  db: Kysely<Database>;
}

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
          200: HistoryReply,
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
