import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Bus } from '@tracehub/bus';
import { type Database, isDatabaseReachable } from '@tracehub/db';
import type { Kysely } from 'kysely';

export interface HealthRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  /** False while the process starts or stops. */
  isReady: () => boolean;
}

/** `/healthz` (alive) and `/readyz` (ready, Postgres and NATS reachable): no token needed. */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, { db, bus, isReady }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], response: { 200: Type.Object({ status: Type.String() }) } } },
    async () => ({ status: 'alive' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        response: {
          200: Type.Object({ status: Type.String() }),
          503: Type.Object({ status: Type.String(), failing: Type.Array(Type.String()) }),
        },
      },
    },
    async (_request, reply) => {
      const failing: string[] = [];
      if (!isReady()) failing.push('service');
      if (!bus.isConnected()) failing.push('nats');
      const dbOk = await Promise.race([
        isDatabaseReachable(db),
        new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref()),
      ]);
      if (!dbOk) failing.push('postgres');
      if (failing.length > 0) return reply.code(503).send({ status: 'not ready', failing });
      return { status: 'ready' };
    },
  );
};
