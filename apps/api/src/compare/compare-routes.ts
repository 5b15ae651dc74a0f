import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { CompareReply, problemResponses, SessionId } from '@tracehub/api-contract';
import { ProblemSchema } from '@tracehub/contracts';
import { type Database, ScanBudget } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { mustGetSession } from '../routes/sessions.js';
import { compareSessions } from './compare-sessions.js';

export interface CompareRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

/** Two runs compared: `GET /compare?a=&b=`. */
export const compareRoutes: FastifyPluginAsyncTypebox<CompareRoutesOptions> = async (app, { db, scanLimitBytes }) => {
  app.get(
    '/compare',
    {
      config: { heavy: true },
      schema: {
        summary: 'Two sessions compared: record counts side by side, and where their sequences first differ',
        description:
          'Per source (QS active object, STP master/channel) the count of each record name in session a and b and the difference (b - a); the two sequences of trace records (kind `record`) aligned by name, object and signal, leaving out timestamps and target addresses, with the first place they differ and dashboard links to it in both. Both sessions are read whole, from the digests their record blocks keep; blocks written before blocks kept one are decoded, within `API_SCAN_LIMIT_MB` for both together (past it a 422; `x-tracehub-scanned-bytes` says how much was decoded).',
        tags: ['sessions'],
        querystring: Type.Object({ a: SessionId, b: SessionId }, { additionalProperties: false }),
        response: { 200: CompareReply, ...problemResponses, 422: ProblemSchema },
      },
    },
    async (request, reply) => {
      const { a, b } = request.query;
      await mustGetSession(db, a);
      await mustGetSession(db, b);
      const budget = new ScanBudget(scanLimitBytes);
      const result = await compareSessions(db, a, b, budget);
      reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
      return result;
    },
  );
};
