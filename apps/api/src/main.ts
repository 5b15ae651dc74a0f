// Process entry point of the api: one runService call; the HTTP app itself is built in app.ts.
import { ConfigError, connectServiceBus, openServiceDb, portProblem, runService } from '@tracehub/service-kit';
import { buildApp } from './app.js';
import { ApiConfigSchema, apiConfigProblems, apiSettingsFrom } from './config.js';

await runService({
  name: 'api',
  configSchema: ApiConfigSchema,
  checkConfig: apiConfigProblems,
  async start(service) {
    const { config, health, logger, metrics, onClose } = service;
    const settings = apiSettingsFrom(config);
    // Started without Postgres, the api serves the live tail and answers queries 503 with
    // Retry-After until Postgres answers; /readyz stays 200, naming postgres as degraded.
    const { db } = await openServiceDb(service, { statementTimeoutMs: settings.statementTimeoutMs, required: false });
    const bus = await connectServiceBus(service);
    if (settings.authNone)
      logger.warn('API_AUTH=none: no authentication, anyone who reaches the API may read and control');
    const app = await buildApp({ db, bus, settings, metrics, logger, readiness: health.readiness });
    onClose(() => app.close());
    await app.listen({ port: config.API_PORT, host: config.API_HOST }).catch((error: NodeJS.ErrnoException) => {
      // Taken since the check at start: still a setting to change, not a crash to restart.
      if (error.code !== 'EADDRINUSE') throw error;
      throw new ConfigError([
        portProblem('API_PORT', String(config.API_PORT), config.API_PORT, config.API_HOST, error.code),
      ]);
    });
    // The port bound, which differs from API_PORT when that is 0 (any free port).
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.API_PORT;
    logger.info({ port }, `api on ${config.API_HOST}:${port} (/api/v1, /docs, dashboard at /)`);
    // Closing the app (registered above) is the whole stop: it ends the live tail and the bridge.
    return { stop: async () => {} };
  },
});
