// What the pipeline tests that drive the API share: real decoder and storage processes and an
// in-process API, on a database and a bus prefix of the test file's own.
import { type App, buildApp } from '@tracehub/api';
import { type Bus, connectBus, ensureTopology } from '@tracehub/bus';
import { type Database, migrateToLatest } from '@tracehub/db';
import { type FreshDatabase, freshDatabase, natsUrl, uniquePrefix } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { testApiSettings } from '../api/fixture-data.js';
import type { RunningProcess } from '../foundation/processes.js';
import { createDb, type PipelineEnv, removeBusPrefix, requireBuild, startService, stopAll } from './harness.js';

type ServiceApp = Parameters<typeof startService>[0];

export interface PipelineWithApi {
  fresh: FreshDatabase;
  db: Kysely<Database>;
  env: PipelineEnv;
  bus: Bus;
  app: App;
  services: RunningProcess[];
  /** Stops the services and the API, and removes the database and the bus prefix. */
  close(): Promise<void>;
}

/**
 * Starts the pipeline for a test file named `label`: a fresh database (migrated), a bus prefix
 * with its topology, the API, then the services in the order given (each `app`, or `[app,
 * extra environment]`).
 */
export async function startPipelineWithApi(
  label: string,
  options: {
    services: ReadonlyArray<ServiceApp | [ServiceApp, Record<string, string>]>;
    api?: Parameters<typeof testApiSettings>[0];
  },
): Promise<PipelineWithApi> {
  requireBuild();
  const fresh = await freshDatabase(label);
  const db = createDb(fresh.url);
  await migrateToLatest(db);
  const env = { natsUrl: natsUrl(), databaseUrl: fresh.url, prefix: uniquePrefix(label) };
  const bus = await connectBus({ url: env.natsUrl, name: `${label}-test`, prefix: env.prefix });
  await ensureTopology(bus);
  const app = await buildApp({ db, bus, settings: testApiSettings(options.api) });
  const services: RunningProcess[] = [];
  for (const service of options.services) {
    const [name, extra] = typeof service === 'string' ? [service, {}] : service;
    services.push(await startService(name, env, extra));
  }
  return {
    fresh,
    db,
    env,
    bus,
    app,
    services,
    close: async () => {
      await stopAll(services);
      await app.close();
      await bus.close();
      await db.destroy();
      await fresh.drop();
      await removeBusPrefix(env.natsUrl, env.prefix);
    },
  };
}
