import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

const Status = Type.Object({ status: Type.String() });
const Ready = Type.Object({
  status: Type.String(),
  degraded: Type.Optional(
    Type.Array(Type.String(), { description: 'servers it works without for now (the api without Postgres)' }),
  ),
});
const NotReady = Type.Object({
  status: Type.String(),
  failing: Type.Optional(Type.Array(Type.String(), { description: 'servers it waits for or cannot reach' })),
});

/**
 * `/healthz` (the process is alive) and `/readyz` (200 while the service is ready, naming under
 * `degraded` what it does without; 503 while it starts or stops, and while a required readiness
 * check fails, naming under `failing` what it waits for or cannot reach). Every service
 * serves them on its health port; the api serves them on its own port too, where a load
 * balancer looks.
 */
export const healthRoutes: FastifyPluginAsync<{ readiness: Readiness }> = async (app, { readiness }) => {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => ({ status: 'alive' }));
  app.get(
    '/readyz',
    { schema: { tags: ['health'], response: { 200: Ready, 503: NotReady } } },
    async (_request, reply) => {
      const report = await readiness.report();
      return reply.code(report.status === 'ready' ? 200 : 503).send(report);
    },
  );
};

/** `/metrics`: the process's Prometheus exposition. */
export const metricsRoute: FastifyPluginAsync<{ metrics: ServiceMetrics }> = async (app, { metrics }) => {
  app.get(
    '/metrics',
    { schema: { tags: ['health'], response: { 200: Type.String({ description: 'Prometheus text exposition' }) } } },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()),
  );
};
