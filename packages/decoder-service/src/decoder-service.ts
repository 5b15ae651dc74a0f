import { hostname } from 'node:os';
import type { Protocol } from '@tracehub/contracts';
import { getLinksSettings } from '@tracehub/db';
import {
  busPrefixSetting,
  connectServiceBus,
  databaseUrlSetting,
  ensureServiceStreams,
  natsConnectionSettings,
  openServiceDb,
  runService,
  type ServiceHandle,
  streamSettings,
  Type,
} from '@tracehub/service-kit';
import { chunkMetrics, workerMetrics } from './decoder-metrics.js';
import { DecoderWorker } from './decoder-worker.js';
import { LinkSettingsReader } from './link-settings-reader.js';
import type { DecoderFactory, LinkSettings } from './types.js';

export const DecoderConfigSchema = Type.Object({
  ...natsConnectionSettings,
  DATABASE_URL: databaseUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
  ...streamSettings,
  DECODER_TICK_MS: Type.Integer({
    minimum: 50,
    maximum: 60_000,
    default: 1000,
    description: 'how often leases are refreshed and new links looked for, ms (under the lease TTL)',
  }),
  DECODER_ACK_WAIT_MS: Type.Integer({
    minimum: 500,
    maximum: 600_000,
    default: 5000,
    description: 'how long a chunk may stay unacked before it is delivered again, ms',
  }),
  DECODER_CHECKPOINT_MS: Type.Integer({
    minimum: 10,
    maximum: 10_000,
    default: 1000,
    description:
      "how often a link's checkpoint is written and its decoded chunks acknowledged, ms (also at every session's end)",
  }),
  DECODER_CHUNKS_IN_FLIGHT: Type.Integer({
    minimum: 2,
    maximum: 1024,
    default: 64,
    description: 'chunks of a link delivered ahead of their acknowledgement, at most',
  }),
});

export interface DecoderServiceDefinition {
  name: string;
  protocols: Protocol[];
  factory: DecoderFactory;
}

/**
 * Runs a decoder worker process: Postgres for per-link settings (the `links` table), NATS for
 * everything else (it starts without Postgres, and is not ready until Postgres answers); leases links of its protocols and decodes them until SIGTERM, when it
 * finishes the chunk in hand and gives its leases back at once.
 */
export function runDecoderService(definition: DecoderServiceDefinition): Promise<ServiceHandle> {
  return runService({
    name: definition.name,
    configSchema: DecoderConfigSchema,
    async start(service) {
      const { config, logger, metrics } = service;
      // A new session's settings are read from Postgres: without it no new session starts (its
      // chunks wait on the raw stream), but sessions already begun decode on, from their
      // checkpoints, and a decoder started during an outage takes them up too.
      const { db } = await openServiceDb(service, { maxConnections: 2 });
      const bus = await connectServiceBus(service);
      await ensureServiceStreams(service, bus);
      const settings = new LinkSettingsReader(
        async (links) => (await getLinksSettings(db, links)) as Map<string, LinkSettings>,
      );
      const worker = new DecoderWorker({
        bus,
        protocols: definition.protocols,
        workerId: `${definition.name}@${hostname()}:${process.pid}`,
        factory: definition.factory,
        tickMs: config.DECODER_TICK_MS,
        ackWaitMs: config.DECODER_ACK_WAIT_MS,
        checkpointMs: config.DECODER_CHECKPOINT_MS,
        maxChunksInFlight: config.DECODER_CHUNKS_IN_FLIGHT,
        log: logger,
        linkSettings: (link) => settings.get(link),
        ...chunkMetrics(metrics),
      });
      workerMetrics(metrics, bus, worker);
      await worker.start();
      return { stop: () => worker.stop() };
    },
  });
}
