// The database and the bus a test file has to itself: what the api, browser and control tests
// build their app on, so none of them sees another's rows or traffic.
import { type Bus, connectBus, ensureTopology, removeTopology } from '@tracehub/bus';
import { type CreateDbOptions, createDb, type Database, migrateToLatest } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { type FreshDatabase, freshDatabase, natsUrl, uniquePrefix } from './index.js';

export interface TestBackends {
  fresh: FreshDatabase;
  db: Kysely<Database>;
  bus: Bus;
  /** Closes the bus (removing its topology, if made) and the database, and drops the database. */
  close(): Promise<void>;
}

export interface TestBackendsOptions {
  topology?: boolean;
  db?: CreateDbOptions;
}

/**
 * A fresh database named after `label`, migrated, and a bus on a prefix of its own (with its
 * streams and buckets when `topology` is set: gateways and control need them).
 */
export async function testBackends(label: string, options: TestBackendsOptions = {}): Promise<TestBackends> {
  const fresh = await freshDatabase(label);
  const db = createDb(fresh.url, options.db);
  await migrateToLatest(db);
  const bus = await connectBus({ url: natsUrl(), name: `${label}-test`, prefix: uniquePrefix(label) });
  if (options.topology) await ensureTopology(bus);
  return {
    fresh,
    db,
    bus,
    close: async () => {
      if (options.topology) await removeTopology(bus);
      await bus.close();
      await db.destroy();
      await fresh.drop();
    },
  };
}

/**
 * `testBackends(label, options)` and what `start` makes on them (an api, a dashboard):
 * `close()` closes that, then the backends. When `start` fails the backends are closed at
 * once, since the test's afterAll has nothing to close yet.
 */
export async function onTestBackends<T extends { close(): Promise<void> }>(
  label: string,
  options: TestBackendsOptions,
  start: (backends: TestBackends) => Promise<T>,
): Promise<T & { backends: TestBackends }> {
  const backends = await testBackends(label, options);
  let started: T;
  try {
    started = await start(backends);
  } catch (err) {
    await backends.close();
    throw err;
  }
  return {
    ...started,
    backends,
    close: async () => {
      await started.close();
      await backends.close();
    },
  };
}
