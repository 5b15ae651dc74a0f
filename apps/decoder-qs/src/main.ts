// Process entry point of the QS decoder: one runService call; the decoding lives in its own modules.
import { connectBus, ensureTopology } from '@tracehub/bus';
import { connectDb, migrateToLatest } from '@tracehub/db';
import { runService } from '@tracehub/service-kit';
import { DecoderConfigSchema } from './config.js';

await runService({
  name: 'decoder-qs',
  configSchema: DecoderConfigSchema,
  async start({ config, health }) {
    // Link settings come from Postgres; the schema is made or updated by whichever service starts first.
    const db = await connectDb(config.DATABASE_URL, { applicationName: 'decoder-qs', maxConnections: 2 });
    const bus = await connectBus({
      url: config.NATS_URL,
      name: 'decoder-qs',
      prefix: config.TRACEHUB_BUS_PREFIX,
    }).catch(async (error) => {
      await db.destroy();
      throw error;
    });
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
