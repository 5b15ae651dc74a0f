// Process entry point of the gateway: one runService call; the work lives in gateway.ts.
import { connectBus, ensureTopology, streamFill } from '@tracehub/bus';
import { createLinkSource, Gateway, LINK_ADDRESS_FORMS, parseLinkSpecs } from '@tracehub/link';
import { takeFrontEndOption } from '@tracehub/qspy-frontend';
import { natsConnectionFrom, runService, streamLevelMetrics, streamLimitsFrom } from '@tracehub/service-kit';
import { Command } from 'commander';
import { GatewayConfigSchema } from './config.js';

// Flags are the per-link form of TRACEHUB_LINKS: `gateway --protocol qs --rig rig7 --link uart0 --address tcp-listen::6601`.
const flags = new Command('gateway')
  .option('--protocol <protocol>', 'qs | stp | swd')
  .option('--rig <rig>', 'rig name')
  .option('--link <link>', 'link name')
  .option('--address <address>', `where to read: ${LINK_ADDRESS_FORMS.join(', ')}`)
  .parse(process.argv)
  .opts<{ protocol?: string; rig?: string; link?: string; address?: string }>();
if (flags.protocol || flags.rig || flags.link || flags.address) {
  process.env.TRACEHUB_LINKS = `${flags.protocol ?? ''}/${flags.rig ?? ''}/${flags.link ?? ''}=${flags.address ?? ''}`;
}

await runService({
  name: 'gateway',
  configSchema: GatewayConfigSchema,
  async start({ config, health, logger, metrics, onClose }) {
    const specs = parseLinkSpecs(config.TRACEHUB_LINKS);
    const sources = specs.map((spec) => {
      // `?frontend=:7701` opens a qspy-compatible front-end port for a QS link (QUTest, QView).
      const { address, frontEnd } = takeFrontEndOption(spec.address);
      if (frontEnd && spec.protocol !== 'qs')
        throw new Error(`link ${spec.rig}/${spec.link}: frontend= is for QS links`);
      return { spec, source: createLinkSource(address), frontEnd };
    });
    const bus = await connectBus({
      ...natsConnectionFrom(config),
      name: 'gateway',
      prefix: config.TRACEHUB_BUS_PREFIX,
    });
    onClose(() => bus.close());
    await ensureTopology(bus, streamLimitsFrom(config));
    const labels = ['protocol', 'rig', 'link'] as const;
    const gateways: Gateway[] = [];
    const labelsOf = (g: Gateway) => ({ protocol: g.link.protocol, rig: g.link.rig, link: g.link.link });
    // Read from the publishers' own counts when scraped, so they move while NATS is away too.
    const lastSeen = new Map<string, number>();
    const countUp = (name: string, g: Gateway, now: number) => {
      const key = `${name}/${g.link.rig}/${g.link.link}`;
      const step = now - (lastSeen.get(key) ?? 0);
      lastSeen.set(key, now);
      return step;
    };
    metrics.counter({
      name: 'gateway_bytes_read_total',
      help: 'bytes read from the link',
      labelNames: labels,
      collect() {
        for (const g of gateways) this.inc(labelsOf(g), countUp('in', g, g.publisher.stats.bytesIn));
      },
    });
    metrics.counter({
      name: 'gateway_bytes_dropped_total',
      help: 'bytes dropped (oldest first, reported in th-lost) because NATS was away or the raw stream full longer than the buffer lasts',
      labelNames: labels,
      collect() {
        for (const g of gateways) this.inc(labelsOf(g), countUp('dropped', g, g.publisher.stats.bytesDropped));
      },
    });
    metrics.gauge({
      name: 'gateway_queued_bytes',
      help: 'bytes waiting for NATS',
      labelNames: labels,
      collect() {
        for (const g of gateways) this.set(labelsOf(g), g.publisher.stats.queuedBytes);
      },
    });
    metrics.counter({
      name: 'gateway_publish_refused_total',
      help: 'raw chunk publishes refused because the raw stream was full (decoders or storage behind)',
      labelNames: labels,
      collect() {
        for (const g of gateways)
          this.inc(labelsOf(g), countUp('publish-refused', g, g.publisher.stats.publishRefused));
      },
    });
    metrics.counter({
      name: 'gateway_publish_failures_total',
      help: 'raw chunk publishes that failed because NATS did not answer',
      labelNames: labels,
      collect() {
        for (const g of gateways)
          this.inc(labelsOf(g), countUp('publish-failed', g, g.publisher.stats.publishFailures));
      },
    });
    metrics.gauge({
      name: 'gateway_links_buffering',
      help: 'links whose chunks are being refused or failing, so that they buffer (and past the buffer, drop)',
      collect() {
        this.set(gateways.filter((g) => g.publisher.stats.holding).length);
      },
    });
    streamLevelMetrics(metrics, () => streamFill(bus));
    metrics.counter({
      name: 'gateway_connections_not_taken_total',
      help: 'tcp-listen connections refused, replaced by a newer one, or closed for sending nothing',
      labelNames: [...labels, 'event'],
      collect() {
        for (const g of gateways) {
          for (const [event, n] of Object.entries(g.publisher.stats.connections)) {
            this.inc({ ...labelsOf(g), event }, countUp(event, g, n));
          }
        }
      },
    });
    const bytesOut = metrics.counter({
      name: 'gateway_bytes_published_total',
      help: 'bytes acknowledged by JetStream',
      labelNames: labels,
    });
    const chunks = metrics.counter({
      name: 'gateway_chunks_published_total',
      help: 'raw chunks acknowledged',
      labelNames: labels,
    });
    const publishSeconds = metrics.histogram({
      name: 'gateway_publish_seconds',
      help: 'time from publish to JetStream ack',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    });
    for (const { spec, source, frontEnd } of sources) {
      const l = { protocol: spec.protocol, rig: spec.rig, link: spec.link };
      const linkLog = logger.child({ link: `${spec.protocol}/${spec.rig}/${spec.link}` });
      gateways.push(
        new Gateway({
          bus,
          link: spec,
          source,
          settings: spec.settings,
          bufferBytes: config.GATEWAY_BUFFER_BYTES,
          chunkBytes: config.GATEWAY_CHUNK_BYTES,
          flushMs: config.GATEWAY_FLUSH_MS,
          log: linkLog,
          frontEnd,
          onFrontEndEvent: (event) => linkLog.info({ frontEnd: event }, `front-end ${event.kind}`),
          onPublished: (info) => {
            bytesOut.inc(l, info.bytes);
            chunks.inc(l);
            publishSeconds.observe(info.ms / 1000);
          },
        }),
      );
    }
    for (const g of gateways) {
      // Each link publishes what it buffered before the bus closes; if one fails to open (a
      // port in use), the ones already reading stop the same way.
      onClose(() => g.stop(3000));
      await g.start();
      const port = g.qsPoint?.port;
      logger.info({ link: `${g.source.description}`, ...(port ? { frontEnd: port.description } : {}) }, 'reading link');
    }
    if (specs.length === 0) logger.info('no links configured (TRACEHUB_LINKS is empty)');
    health.addReadinessCheck('nats', () => bus.isConnected());
    // The links and the bus close through onClose, in that order.
    return { stop: async () => {} };
  },
});
