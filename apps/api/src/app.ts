import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import cors from '@fastify/cors';
import sensible from '@fastify/sensible';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import websocket from '@fastify/websocket';
import type { Bus } from '@tracehub/bus';
import { redactQuery, TraceRecordSchema } from '@tracehub/contracts';
import { type Database, isDatabaseReachable } from '@tracehub/db';
import { RecordFeed } from '@tracehub/live';
import { palmTraceBridge } from '@tracehub/palmtrace-bridge';
import { healthRoutes, type Logger, metricsRoute, Readiness, ServiceMetrics } from '@tracehub/service-kit';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Kysely } from 'kysely';
import { compareRoutes } from './compare/compare-routes.js';
import type { ApiSettings } from './config.js';
import { LinkRates } from './live/link-rates.js';
import { LiveHub } from './live/live-hub.js';
import { liveRoutes } from './live/live-routes.js';
import { MemoryReturn } from './live/memory-return.js';
import { bearerAuth, grantEveryScope } from './plugins/auth.js';
import { limitHeavyRequests } from './plugins/heavy-requests.js';
import { clientErrorProblem, frameworkProblem, MAX_PATH_PART, problemReplies } from './plugins/problems.js';
import { absentBodyIsEmpty, buildRequestValidator, refuseNulText } from './plugins/request-validation.js';
import { controlRoutes } from './routes/control.js';
import { fleetRoutes } from './routes/fleet.js';
import { historyRoutes } from './routes/history.js';
import { linkConnectionRoutes } from './routes/link-connection.js';
import { linkMarkerRoutes } from './routes/link-markers.js';
import { linkSettingsRoutes } from './routes/link-settings.js';
import { recordRatesRoutes } from './routes/record-rates.js';
import { recordSeriesRoutes } from './routes/record-series.js';
import { recordRoutes } from './routes/records.js';
import { sessionChannelsRoutes } from './routes/session-channels.js';
import { sessionLossesRoutes } from './routes/session-losses.js';
import { sessionStateMachinesRoutes } from './routes/session-state-machines.js';
import { sessionRoutes } from './routes/sessions.js';
import { targetTimeRoutes } from './routes/target-time.js';
import { timelineRoutes } from './routes/timeline.js';
import { DEFAULT_WATCH_SETTINGS, watchRoutes } from './watch/watch-plugin.js';

export interface AppDeps {
  db: Kysely<Database>;
  bus: Bus;
  settings: ApiSettings;
  /** The process's metrics registry (a fresh one when omitted). */
  metrics?: ServiceMetrics;
  /** The service's logger, for Fastify's request lines too (off when omitted); credentials in URLs are never written. */
  logger?: Logger;
  /**
   * The service's readiness, which `/readyz` reports (its NATS and Postgres checks added where
   * the connections were made); when omitted, ready while `bus` is connected and `db` answers.
   */
  readiness?: Readiness;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The live records: rates per link and the live-tail clients. */
    liveHub: LiveHub;
  }
}

export type App = FastifyInstance;

/**
 * Fastify's request lines at debug (LOG_LEVEL=debug shows them): at info they drowned
 * everything else the api said. A request that failed is still an error line.
 */
class DebugRequestLines extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
    else if (!this.isLogDisabled(request))
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Fastify's request line with the values of `access_token` and the like replaced. */
function loggedRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactQuery(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/**
 * The api: one plugin per concern, registered here in the order a request meets them.
 * Call `listen()` to serve, or `inject()` in tests; `close()` also ends the live tail.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { db, bus, settings } = deps;
  // The service's own logger (one format for every line the process writes), no logging without it.
  const loggerInstance: FastifyBaseLogger | undefined = deps.logger?.child({}, { serializers: { req: loggedRequest } });
  const app = Fastify({
    loggerInstance,
    logController: new DebugRequestLines(),
    // HTTPS when configured; behind a TLS-terminating proxy leave it off (see the README).
    https: settings.tls ? { cert: readFileSync(settings.tls.certFile), key: readFileSync(settings.tls.keyFile) } : null,
    bodyLimit: settings.bodyLimit,
    // Query strings are bounded too: long filters are a mistake or an attack.
    routerOptions: { maxParamLength: MAX_PATH_PART },
    // Refusals before a route runs are problems too.
    frameworkErrors: (error, _request, reply) => frameworkProblem(error, reply),
    clientErrorHandler: clientErrorProblem,
    // One rule for numbers in every query string, path and body (see request-validation.ts).
    schemaController: { compilersFactory: { buildValidator: buildRequestValidator } },
    ajv: { customOptions: { allErrors: false, coerceTypes: 'array', removeAdditional: false, useDefaults: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (settings.authNone) {
    // The dashboard shows a banner while the API runs without authentication.
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('x-tracehub-auth', 'none');
    });
  }
  await app.register(problemReplies, { statementTimeoutMs: settings.statementTimeoutMs });
  await app.register(sensible);
  app.addHook('preValidation', absentBodyIsEmpty);
  app.addHook('preValidation', refuseNulText);
  // Bodies are JSON: a text/plain body is a 415 saying so, not a string the body schema refuses.
  app.removeContentTypeParser('text/plain');
  app.addSchema(TraceRecordSchema);

  const metrics = deps.metrics ?? new ServiceMetrics('api');
  const requests = metrics.counter({
    name: 'api_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'],
  });
  app.addHook('onResponse', async (request, reply) => {
    requests.inc({ route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) });
  });

  // This process's name in the leases of Reporter endpoints and watch rules (one per process).
  const replicaId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // One live record feed for the live tail, the PalmTrace bridge and the watch rules alike.
  const feed = new RecordFeed(bus, app.log);
  const rates = new LinkRates(bus, app.log);
  rates.start();
  const hub = new LiveHub(feed, rates, settings.liveQueueRecords);
  metrics.gauge({
    name: 'api_live_clients',
    help: 'connected live-tail clients',
    collect() {
      this.set(hub.clientCount);
    },
  });
  metrics.gauge({
    name: 'api_live_held_records',
    help: "records the live-tail clients' outlets hold (0 once every client has gone)",
    collect() {
      this.set(hub.heldRecords);
    },
  });
  app.addHook('preClose', async () => {
    hub.stop();
    await rates.stop();
  });
  app.addHook('onClose', async () => feed.stop());
  app.decorate('liveHub', hub);

  if (settings.corsOrigins.length > 0) await app.register(cors, { origin: settings.corsOrigins, credentials: false });
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'tracehub API',
        version: '1',
        description: 'Query, export, live tail and control of the tracehub fleet.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  // Health needs no token (a load balancer asks); metrics do.
  await app.register(healthRoutes, { readiness: deps.readiness ?? readyWhileConnected(db, bus) });
  await app.register(async (secured) => {
    secured.addHook('onRequest', settings.authNone ? grantEveryScope : bearerAuth(settings.tokens));
    secured.addHook('onRequest', limitHeavyRequests(settings.heavyQueries));
    await secured.register(metricsRoute, { metrics });
    await secured.register(
      async (api) => {
        await api.register(fleetRoutes, { db, hub });
        await api.register(historyRoutes, { db });
        await api.register(recordRatesRoutes, { db });
        await api.register(sessionRoutes, { db, maxPageSize: settings.maxPageSize });
        await api.register(recordRoutes, {
          db,
          maxPageSize: settings.maxPageSize,
          scanLimitBytes: settings.scanLimitBytes,
        });
        await api.register(sessionChannelsRoutes, { db, scanLimitBytes: settings.scanLimitBytes });
        await api.register(sessionStateMachinesRoutes, { db, scanLimitBytes: settings.scanLimitBytes });
        await api.register(sessionLossesRoutes, { db });
        await api.register(timelineRoutes, { db });
        await api.register(compareRoutes, { db, scanLimitBytes: settings.scanLimitBytes });
        await api.register(targetTimeRoutes, { db, scanLimitBytes: settings.scanLimitBytes });
        await api.register(recordSeriesRoutes, { db, scanLimitBytes: settings.scanLimitBytes });
        await api.register(liveRoutes, { hub });
        await api.register(controlRoutes, { db, bus, feed, timeoutMs: settings.controlTimeoutMs });
        await api.register(linkSettingsRoutes, { db, bus, timeoutMs: settings.controlTimeoutMs });
        await api.register(linkConnectionRoutes, { db, bus, timeoutMs: settings.controlTimeoutMs });
        await api.register(linkMarkerRoutes, { db, bus, timeoutMs: settings.controlTimeoutMs });
        await api.register(palmTraceBridge, { db, feed, metrics, settings: settings.palmTrace, replicaId });
        // Live readers: the live tail's clients and the PalmTrace listening port's.
        const collections = metrics.counter({
          name: 'api_full_collections_after_readers_left_total',
          help: 'full garbage collections made because live readers left (their memory given back)',
        });
        const memoryReturn = new MemoryReturn(
          () => hub.departed + (api.palmTrace.listenerLoad()?.departed ?? 0),
          () => collections.inc(),
        );
        memoryReturn.start();
        app.addHook('onClose', async () => memoryReturn.stop());
        await api.register(watchRoutes, {
          db,
          feed,
          metrics,
          replicaId,
          settings: settings.watch ?? DEFAULT_WATCH_SETTINGS,
        });
      },
      { prefix: '/api/v1' },
    );
  });

  if (settings.dashboardDir && existsSync(settings.dashboardDir)) {
    // The dashboard is static code with no data in it; the data it shows comes from /api/v1 with a token.
    await app.register(fastifyStatic, {
      root: settings.dashboardDir,
      prefix: '/',
      index: 'index.html',
    });
  }

  return app;
}

/** The readiness of an app built on its own (tests, benchmarks): ready while NATS and Postgres answer. */
function readyWhileConnected(db: Kysely<Database>, bus: Bus): Readiness {
  const readiness = new Readiness();
  readiness.addCheck('nats', () => bus.isConnected());
  readiness.addCheck('postgres', () => isDatabaseReachable(db));
  readiness.setReady(true);
  return readiness;
}
