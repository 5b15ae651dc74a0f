// Process entry point of storage: one runService call; the writing lives in record-store.ts.
import { connectBus, ensureTopology } from '@tracehub/bus';
import { connectDb, migrateToLatest } from '@tracehub/db';
import { runService } from '@tracehub/service-kit';
import { StorageConfigSchema } from './config.js';

await runService({
  name: 'storage',
  configSchema: StorageConfigSchema,
  async start({ config, health }) {
    const db = await connectDb(config.DATABASE_URL, { applicationName: 'storage' });
    const bus = await connectBus({ url: config.NATS_URL, name: 'storage', prefix: config.TRACEHUB_BUS_PREFIX }).catch(
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
      await ensureTopology(bus);
    } catch (error) {
      await close();
      throw error;
    }
    health.addReadinessCheck('nats', () => bus.isConnected());
    return { stop: close };
  },
});
