// Process entry point of the gateway: one runService call; the work lives in gateway.ts.
import { Gateway, LINK_ADDRESS_FORMS } from '@tracehub/link';
import { connectServiceBus, ensureServiceStreams, runService } from '@tracehub/service-kit';
import { Command } from 'commander';
import { GatewayConfigSchema } from './config.js';
import { gatewayMetrics } from './gateway-metrics.js';
import { gatewayLinksOf, linksProblems } from './links-check.js';
import { TraceBoxOutputs } from './tracebox-outputs.js';

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
  checkConfig: (config) => linksProblems(config.TRACEHUB_LINKS),
  async start(service) {
    const { config, logger, metrics, onClose } = service;
    // `?frontend=:7701` opens a qspy-compatible front-end port for a QS link (QUTest, QView).
    const sources = gatewayLinksOf(config.TRACEHUB_LINKS);
    const bus = await connectServiceBus(service);
    await ensureServiceStreams(service, bus);
    const gateways: Gateway[] = [];
    // `?tracebox=:7801` streams an STP/SWD link's OST or PhoNet messages to trace box clients.
    const traceBoxes = new TraceBoxOutputs(bus);
    onClose(() => traceBoxes.close());
    const onPublished = gatewayMetrics(metrics, gateways);
    for (const { spec, source, frontEnd, traceBox } of sources) {
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
          minChunkBytes: config.GATEWAY_MIN_CHUNK_BYTES,
          maxFlushMs: config.GATEWAY_MAX_FLUSH_MS,
          networkPauseMarkNs: BigInt(config.GATEWAY_NETWORK_PAUSE_MS) * 1_000_000n,
          log: linkLog,
          frontEnd,
          onFrontEndEvent: (event) => linkLog.info({ frontEnd: event }, `front-end ${event.kind}`),
          onPublished: (info) => onPublished(spec, info),
        }),
      );
      if (traceBox) {
        const output = await traceBoxes.open(spec, traceBox, spec.settings, linkLog);
        linkLog.info({ traceBox: `${traceBox.host}:${output.port}` }, 'trace box output listening');
      }
    }
    for (const g of gateways) {
      // Each link publishes what it buffered before the bus closes; if one fails to open (a
      // port in use), the ones already reading stop the same way.
      onClose(() => g.stop(3000));
      await g.start();
      const port = g.frontEndPort;
      logger.info({ link: `${g.source.description}`, ...(port ? { frontEnd: port.description } : {}) }, 'reading link');
    }
    if (sources.length === 0) logger.info('no links configured (TRACEHUB_LINKS is empty)');
    // The links and the bus close through onClose, in that order.
    return { stop: async () => {} };
  },
});
