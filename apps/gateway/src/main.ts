// Process entry point of the gateway: one runService call; the work itself lives in gateway.ts.
import { connectBus, ensureTopology } from '@tracehub/bus';
import { runService } from '@tracehub/service-kit';
import { GatewayConfigSchema } from './config.js';

await runService({
  name: 'gateway',
  configSchema: GatewayConfigSchema,
  async start({ config, health, logger }) {
    const bus = await connectBus({ url: config.NATS_URL, name: 'gateway', prefix: config.TRACEHUB_BUS_PREFIX });
    try {
      await ensureTopology(bus);
    } catch (error) {
      await bus.close();
      throw error;
    }
    health.addReadinessCheck('nats', () => bus.isConnected());
    if (!config.TRACEHUB_LINKS) logger.info('no links configured (TRACEHUB_LINKS is empty)');
    return {
      async stop() {
        await bus.close();
      },
    };
  },
});
