// Process entry point of the api: one runService call; the HTTP app itself is built in app.ts.
import { connectServiceBus, openServiceDb, runService } from '@tracehub/service-kit';
import { buildApp } from './app.js';
import { ApiConfigSchema, apiSettingsFrom } from './config.js';

await runService({
  name: 'api',
  configSchema: ApiConfigSchema,
  async start(service) {
    const { config, health, logger, metrics, onClose } = service;
    const settings = apiSettingsFrom(config);
    // Started without Postgres, the api serves the live tail and answers queries 503 with
    // Retry-After until Postgres answers; /readyz stays 200, naming postgres as degraded.
    const { db } = await openServiceDb(service, { statementTimeoutMs: settings.statementTimeoutMs, required: false });
    const bus = await connectServiceBus(service);
    if (settings.tokens.size === 0) logger.warn('API_TOKENS is empty: every request but health is refused');
    const app = await buildApp({ db, bus, settings, metrics, logger, readiness: health.readiness });
    onClose(() => app.close());
    await app.listen({ port: config.API_PORT, host: config.API_HOST });
    // The port bound, which differs from API_PORT when that is 0 (any free port).
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.API_PORT;
    logger.info({ port }, `api on ${config.API_HOST}:${port} (/api/v1, /docs, dashboard at /)`);
    // Closing the app (registered above) is the whole stop: it ends the live tail and the bridge.
    return { stop: async () => {} };
  },
});
