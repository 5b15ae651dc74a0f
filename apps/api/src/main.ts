// Process entry point of the api: one runService call; the HTTP app itself is built in its own modules.
import { connectBus } from '@tracehub/bus';
import { connectDb, migrateToLatest } from '@tracehub/db';
import { runService } from '@tracehub/service-kit';
import { ApiConfigSchema } from './config.js';

await runService({
  name: 'api',
  configSchema: ApiConfigSchema,
  async start({ config, health }) {
    const db = await connectDb(config.DATABASE_URL, { applicationName: 'api' });
    const bus = await connectBus({ url: config.NATS_URL, name: 'api', prefix: config.TRACEHUB_BUS_PREFIX }).catch(
      async (error) => {
        await db.destroy();
        throw error;
      },
    );
    const close = async () => {
      await bus.close();
      await db.destroy();
    };
    try {
      await migrateToLatest(db);
    } catch (error) {
      await close();
      throw error;
    }
    health.addReadinessCheck('nats', () => bus.isConnected());
    return { stop: close };
  },
});
