import { type Bus, connectBus, ensureTopology, streamFill } from '@tracehub/bus';
import { type CreateDbOptions, connectDb, type Database, isDatabaseReachable, migrateToLatest } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { type NatsConnectionConfig, natsConnectionFrom, type StreamConfig, streamLimitsFrom } from './config.js';
import type { ServiceContext } from './run-service.js';
import { streamLevelMetrics } from './stream-level-metrics.js';

/**
 * A service's connection to NATS, as its settings say: closed when the service ends (after
 * what was built on it), and the service is not ready while it is down.
 */
export async function connectServiceBus(
  service: ServiceContext<NatsConnectionConfig & { TRACEHUB_BUS_PREFIX: string }>,
): Promise<Bus> {
  const bus = await connectBus({
    ...natsConnectionFrom(service.config),
    name: service.name,
    prefix: service.config.TRACEHUB_BUS_PREFIX,
  });
  service.onClose(() => bus.close());
  service.health.addReadinessCheck('nats', () => bus.isConnected());
  return bus;
}

/**
 * A service's Postgres, its schema migrated to the latest: closed when the service ends, and
 * the service is not ready while Postgres does not answer.
 */
export async function connectServiceDb(
  service: ServiceContext<{ DATABASE_URL: string }>,
  options: Omit<CreateDbOptions, 'applicationName'> = {},
): Promise<Kysely<Database>> {
  const db = await connectDb(service.config.DATABASE_URL, { applicationName: service.name, ...options });
  service.onClose(() => db.destroy());
  await migrateToLatest(db);
  service.health.addReadinessCheck('postgres', () => isDatabaseReachable(db));
  return db;
}

/**
 * The raw and record streams made (or brought up to date) with the stream settings, for a
 * service that publishes to or reads them; their fill is exported as metrics.
 */
export async function ensureServiceStreams(service: ServiceContext<StreamConfig>, bus: Bus): Promise<void> {
  await ensureTopology(bus, streamLimitsFrom(service.config));
  streamLevelMetrics(service.metrics, () => streamFill(bus));
}
