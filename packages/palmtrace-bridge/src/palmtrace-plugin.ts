import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from '@sinclair/typebox';
import { EmptyBody, ReporterEndpointSchema, ReporterStatusSchema, ReportersReply } from '@tracehub/api-contract';
import { NAME_PATTERN, problemResponses } from '@tracehub/contracts';
import type { Database } from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import type { ServiceMetrics } from '@tracehub/service-kit';
import fp from 'fastify-plugin';
import type { Kysely } from 'kysely';
import { DEFAULT_PALMTRACE_SETTINGS, type PalmTraceBridgeSettings } from './bridge-settings.js';
import { replayProblem } from './endpoint-schema.js';
import { PalmTraceBridge, ReporterExistsError } from './palmtrace-bridge.js';

export interface PalmTraceBridgeOptions {
  db: Kysely<Database>;
  /** The host's live record feed, shared with its other live readers. */
  feed: RecordFeed;
  metrics: ServiceMetrics;
  /** Default: no endpoints, listening mode off. */
  settings?: PalmTraceBridgeSettings;
  /** This process's name in endpoint leases (default: host, pid and a random part). */
  replicaId?: string;
}

const IdParams = Type.Object({ id: Type.String({ pattern: NAME_PATTERN }) });

/**
 * The PalmTrace bridge as an api plugin: starts the configured Reporter endpoints and the
 * listening port when the app is ready, stops them when it closes, serves `/reporters`
 * (list and status with `read`, add and remove with `control`) and exports per-endpoint
 * metrics.
 */
const bridgePlugin: FastifyPluginAsyncTypebox<PalmTraceBridgeOptions> = async (app, options) => {
  const settings = options.settings ?? DEFAULT_PALMTRACE_SETTINGS;
  const bridge = new PalmTraceBridge({
    db: options.db,
    feed: options.feed,
    settings,
    replicaId: options.replicaId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    log: app.log,
  });
  app.addHook('onReady', async () => bridge.start());
  app.addHook('onClose', async () => bridge.stop());
  app.decorate('palmTrace', bridge);
  registerMetrics(options.metrics, bridge);

  app.get(
    '/reporters',
    reporterRoute({
      summary: 'PalmTrace Reporter endpoints with their status, and the listening port',
      response: { 200: ReportersReply },
    }),
    async () => ({ reporters: await bridge.list(), listener: bridge.listenerStatus() }),
  );

  app.get(
    '/reporters/:id',
    reporterRoute({
      summary: 'Status of one Reporter endpoint',
      params: IdParams,
      response: { 200: ReporterStatusSchema },
    }),
    async (request) => (await bridge.get(request.params.id)) ?? unknownEndpoint(request.params.id),
  );

  app.post(
    '/reporters',
    reporterRoute(
      {
        summary: 'Add a Reporter endpoint: connect to it and send it live records (or a replay)',
        body: ReporterEndpointSchema,
        response: { 201: ReporterStatusSchema, 409: problemResponses[400] },
      },
      'control',
    ),
    async (request, reply) => {
      const problem = replayProblem(request.body.replay);
      if (problem) throw httpErrors.badRequest(`body replay: ${problem}`);
      try {
        const status = await bridge.add(request.body);
        // Records published after this answer reach the endpoint.
        await bridge.flush();
        return reply.code(201).send(status);
      } catch (error) {
        if (error instanceof ReporterExistsError) throw httpErrors.conflict(error.message);
        throw error;
      }
    },
  );

  app.delete(
    '/reporters/:id',
    reporterRoute(
      {
        summary: 'Remove a Reporter endpoint (its connection is closed)',
        params: IdParams,
        body: EmptyBody,
        response: { 204: Type.Null() },
      },
      'control',
    ),
    async (request, reply) => {
      if (!(await bridge.remove(request.params.id))) unknownEndpoint(request.params.id);
      return reply.code(204).send(null);
    },
  );
};

/** The options of a `/reporters` route: under the palmtrace tag, answering problems, needing `scope`. */
function reporterRoute<
  S extends { summary: string; params?: TSchema; body?: TSchema; response: Record<number, TSchema> },
>(schema: S, scope: 'read' | 'control' = 'read') {
  return {
    config: { scope },
    schema: { ...schema, tags: ['palmtrace'], response: { ...schema.response, ...problemResponses } },
  };
}

/** A 404 naming the Reporter endpoint there is none of. */
function unknownEndpoint(id: string): never {
  throw httpErrors.notFound(`no Reporter endpoint ${JSON.stringify(id)}`);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The Reporter endpoints and the listening port. */
    palmTrace: PalmTraceBridge;
  }
  interface FastifyContextConfig {
    /** Scope a token needs for the route (the host's authentication reads it; default `read`). */
    scope?: 'read' | 'control';
  }
}

/**
 * The PalmTrace bridge as a Fastify plugin: register it inside the host's authenticated
 * prefix; it adds `/reporters` there and decorates the instance with `palmTrace`.
 */
export const palmTraceBridge = fp(bridgePlugin, { name: 'palmtrace-bridge', fastify: '5.x' });

type EndpointStatus = ReturnType<PalmTraceBridge['servedHere']>[number];
type EndpointSeries = readonly [name: string, help: string, value: (status: EndpointStatus) => number];

/** Per-endpoint counters, from the counts each endpoint this process serves keeps. */
const ENDPOINT_COUNTERS: readonly EndpointSeries[] = [
  ['palmtrace_messages_sent_total', 'PalmTrace messages sent to a Reporter', (s) => s.messagesSent],
  ['palmtrace_bytes_sent_total', 'PalmTrace bytes sent to a Reporter', (s) => s.bytesSent],
  [
    'palmtrace_dropped_records_total',
    'records a Reporter did not get (it was slower than the stream, or away)',
    (s) => s.dropped,
  ],
  ['palmtrace_reconnects_total', 'connections to a Reporter made again after a loss', (s) => s.reconnects],
];

/** Per-endpoint gauges, from the same statuses. */
const ENDPOINT_GAUGES: readonly EndpointSeries[] = [
  ['palmtrace_reporter_connected', 'PalmTrace Reporter connected (1) or not (0)', (s) => (s.connected ? 1 : 0)],
  ['palmtrace_queued_records', 'records waiting for a Reporter', (s) => s.queued],
];

/** Per-endpoint series, read from the endpoints' counters when scraped. */
function registerMetrics(metrics: ServiceMetrics, bridge: PalmTraceBridge): void {
  const perEndpoint = (value: (status: EndpointStatus) => number) => () =>
    bridge.servedHere().map((s) => [{ reporter: s.id }, value(s)] as const);
  for (const [name, help, value] of ENDPOINT_COUNTERS) {
    metrics.sampledCounter({ name, help, labelNames: ['reporter'], samples: perEndpoint(value) });
  }
  for (const [name, help, value] of ENDPOINT_GAUGES) {
    metrics.sampledGauge({ name, help, labelNames: ['reporter'], samples: perEndpoint(value) });
  }
  metrics.gauge({
    name: 'palmtrace_listener_clients',
    help: 'clients connected to the PalmTrace listening port',
    collect() {
      this.set(bridge.listenerLoad()?.clients ?? 0);
    },
  });
  metrics.gauge({
    name: 'palmtrace_listener_held_records',
    help: "records the listening port's outlet holds for its clients (0 once every client has gone)",
    collect() {
      this.set(bridge.listenerLoad()?.heldRecords ?? 0);
    },
  });
}
