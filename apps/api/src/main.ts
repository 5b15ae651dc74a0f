// Process entry point of the api: one runService call; the HTTP app itself is built in app.ts.
import { connectBus } from '@tracehub/bus';
import { connectDb, migrateToLatest } from '@tracehub/db';
import { runService } from '@tracehub/service-kit';
import { buildApp } from './app.js';
import { ApiConfigSchema, apiSettingsFrom } from './config.js';

await runService({
  name: 'api',
  configSchema: ApiConfigSchema,
  async start({ config, health, logger, metrics }) {
    const settings = apiSettingsFrom(config);
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
    if (settings.tokens.size === 0) logger.warn('API_TOKENS is empty: every request but health is refused');
    const app = await buildApp({
      db,
      bus,
      settings,
      metrics,
      logger: { level: config.LOG_LEVEL },
      isReady: () => health.ready,
    });
    try {
      await app.listen({ port: config.API_PORT, host: config.API_HOST });
    } catch (error) {
      await app.close();
      await close();
      throw error;
    }
    logger.info(
      { port: config.API_PORT },
      `api on ${config.API_HOST}:${config.API_PORT} (/api/v1, /docs, dashboard at /)`,
    );
    return {
      stop: async () => {
        await app.close();
        await close();
      },
    };
  },
});
