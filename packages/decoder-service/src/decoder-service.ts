import { hostname } from 'node:os';
import { connectBus, ensureTopology, streamFill } from '@tracehub/bus';
import type { Protocol } from '@tracehub/contracts';
import { connectDb, getLinkSettings, isDatabaseReachable, migrateToLatest } from '@tracehub/db';
import {
  busPrefixSetting,
  databaseUrlSetting,
  natsConnectionFrom,
  natsConnectionSettings,
  runService,
  type ServiceHandle,
  streamLevelMetrics,
  streamLimitsFrom,
  streamSettings,
  Type,
} from '@tracehub/service-kit';
import { type DecoderFactory, DecoderWorker, type LinkSettings } from './decoder-worker.js';

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
});

export interface DecoderServiceDefinition {
  name: string;
  protocols: Protocol[];
  factory: DecoderFactory;
}

/**
 * Runs a decoder worker process: Postgres for per-link settings (the `links` table), NATS for
 * everything else; leases links of its protocols and decodes them until SIGTERM, when it
 * finishes the chunk in hand and gives its leases back at once.
 */
export function runDecoderService(definition: DecoderServiceDefinition): Promise<ServiceHandle> {
  return runService({
    name: definition.name,
    configSchema: DecoderConfigSchema,
    async start({ config, health, metrics, logger, onClose }) {
      const db = await connectDb(config.DATABASE_URL, { applicationName: definition.name, maxConnections: 2 });
      onClose(() => db.destroy());
      const bus = await connectBus({
        ...natsConnectionFrom(config),
        name: definition.name,
        prefix: config.TRACEHUB_BUS_PREFIX,
      });
      onClose(() => bus.close());
      await migrateToLatest(db);
      await ensureTopology(bus, streamLimitsFrom(config));
      const labels = ['protocol', 'rig', 'link'] as const;
      const bytes = metrics.counter({ name: 'decoder_bytes_total', help: 'raw bytes decoded', labelNames: labels });
      const chunks = metrics.counter({ name: 'decoder_chunks_total', help: 'raw chunks decoded', labelNames: labels });
      const records = metrics.counter({ name: 'decoder_records_total', help: 'records published', labelNames: labels });
      const errors = metrics.counter({ name: 'decoder_errors_total', help: 'error records', labelNames: labels });
      const gaps = metrics.counter({ name: 'decoder_gaps_total', help: 'sequence gaps', labelNames: labels });
      const lost = metrics.counter({
        name: 'decoder_link_lost_bytes_total',
        help: 'bytes the gateway dropped',
        labelNames: labels,
      });
      const latency = metrics.histogram({
        name: 'decoder_chunk_seconds',
        help: 'time from taking a chunk to its checkpoint (decode, publish, checkpoint)',
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      });
      const held = metrics.gauge({ name: 'decoder_links_held', help: 'links this worker holds' });
      const fairShare = metrics.gauge({
        name: 'decoder_links_fair_share',
        help: 'links this worker takes at most: the links of its protocols over the workers alive (decoder_workers_alive)',
      });
      const alive = metrics.gauge({
        name: 'decoder_workers_alive',
        help: 'decoder workers of these protocols alive now',
      });
      const refused = metrics.counter({
        name: 'decoder_publish_refused_total',
        help: 'record publishes refused (reason full: the record stream is full) or failing (unavailable); the link holds its chunk and tries again',
        labelNames: [...labels, 'reason'],
      });
      streamLevelMetrics(metrics, () => streamFill(bus));
      const lag = metrics.gauge({
        name: 'decoder_pending_chunks',
        help: 'raw chunks waiting, per held link',
        labelNames: labels,
      });
      const worker = new DecoderWorker({
        bus,
        protocols: definition.protocols,
        workerId: `${definition.name}@${hostname()}:${process.pid}`,
        factory: definition.factory,
        tickMs: config.DECODER_TICK_MS,
        ackWaitMs: config.DECODER_ACK_WAIT_MS,
        log: logger,
        linkSettings: async (link) => ((await getLinkSettings(db, link.rig, link.link)) ?? {}) as LinkSettings,
        onChunk: (info) => {
          const l = { protocol: info.link.protocol, rig: info.link.rig, link: info.link.link };
          bytes.inc(l, info.bytes);
          chunks.inc(l);
          records.inc(l, info.records);
          errors.inc(l, info.errors);
          gaps.inc(l, info.gaps);
          lost.inc(l, info.lostBytes);
          latency.observe(info.totalMs / 1000);
        },
        onRefused: ({ link, full }) =>
          refused.inc({
            protocol: link.protocol,
            rig: link.rig,
            link: link.link,
            reason: full ? 'full' : 'unavailable',
          }),
      });
      metrics.gauge({
        name: 'decoder_links_held_back',
        help: 'held links whose records the record stream refuses now (each holds its chunk and takes no more)',
        collect() {
          this.set(worker.heldBackLinks().length);
        },
      });
      await worker.start();
      // Lag: what is still waiting on each held link's consumer.
      const lagTimer = setInterval(async () => {
        const links = worker.heldLinks();
        held.set(links.length);
        fairShare.set(worker.share.share);
        alive.set(worker.share.workers);
        for (const l of links) {
          const info = await bus.jsm.consumers
            .info(bus.names.rawStream, bus.names.decoderConsumer(l))
            .catch(() => undefined);
          if (info)
            lag.set({ protocol: l.protocol, rig: l.rig, link: l.link }, info.num_pending + info.num_ack_pending);
        }
      }, 5000);
      lagTimer.unref();
      health.addReadinessCheck('nats', () => bus.isConnected());
      // A new session's settings are read from Postgres: without it no new session starts.
      health.addReadinessCheck('postgres', () => isDatabaseReachable(db));
      return {
        stop: async () => {
          clearInterval(lagTimer);
          await worker.stop();
        },
      };
    },
  });
}
