import { setTimeout as delay } from 'node:timers/promises';
import { type Bus, connectBus, ensureTopology, streamFill } from '@tracehub/bus';
import { Backoff, redactUrl } from '@tracehub/contracts';
import {
  type CreateDbOptions,
  connectDb,
  createDb,
  type Database,
  DatabaseConnectError,
  isDatabaseReachable,
  MigrationError,
  migrateToLatest,
  postgresFailureOf,
} from '@tracehub/db';
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

/** A service's Postgres pool, and whether its schema has been brought up to date yet. */
export interface ServiceDb {
  db: Kysely<Database>;
  /** Resolves once Postgres has answered and the schema is migrated; rejects when the service stops first. */
  migrated: Promise<void>;
}

export type ServiceDbOptions = Omit<CreateDbOptions, 'applicationName'> & {
  /** Whether the service is ready without Postgres (false: listed as degraded instead); default true. */
  required?: boolean;
};

/** Waits between tries to reach Postgres, ms: doubling from 250 ms up to 5 s. */
const POSTGRES_START_RETRY = { fromMs: 250, maxMs: 5000 };

/**
 * A service's Postgres, which it can start without. When Postgres answers at start, the schema
 * is migrated before this resolves, and anything wrong (a database that does not exist, a
 * refused login, a failing migration) fails the start with one line, as it should. When
 * Postgres cannot be reached (refused, reset, timed out, shutting down), this resolves at once
 * with the pool and `migrated` pending: the schema is migrated once Postgres answers, tried
 * again with doubling waits up to 5 s. The pool is closed when the service ends. Readiness:
 * `postgres` fails until migrated and while Postgres does not answer.
 */
export async function openServiceDb(
  service: ServiceContext<{ DATABASE_URL: string }>,
  options: ServiceDbOptions = {},
): Promise<ServiceDb> {
  const { required, ...poolOptions } = options;
  const url = service.config.DATABASE_URL;
  const pool = { applicationName: service.name, ...poolOptions };
  let db: Kysely<Database>;
  let reachable = true;
  try {
    db = await connectDb(url, pool);
  } catch (error) {
    if (!(error instanceof DatabaseConnectError) || postgresFailureOf(error.cause) !== 'unavailable') throw error;
    service.logger.warn(`${error.message}; waiting for it (/readyz names it)`);
    db = createDb(url, pool);
    reachable = false;
  }
  service.onClose(() => db.destroy());
  let isMigrated = false;
  service.health.addReadinessCheck('postgres', () => isMigrated && isDatabaseReachable(db), { required });
  const migrated = migrateWhenReachable(service, db).then(() => {
    isMigrated = true;
  });
  if (reachable) await migrated;
  // Nobody waits for it: what waiting cannot cure ends the service then.
  else
    migrated.catch((error) => {
      if (!service.signal.aborted) service.fail(error);
    });
  return { db, migrated };
}

async function migrateWhenReachable(
  service: ServiceContext<{ DATABASE_URL: string }>,
  db: Kysely<Database>,
): Promise<void> {
  const backoff = new Backoff(POSTGRES_START_RETRY);
  for (let attempt = 1; ; attempt++) {
    if (service.signal.aborted) throw new Error('stopped before Postgres could be reached');
    try {
      await migrateToLatest(db);
      if (attempt > 1)
        service.logger.info(`Postgres at ${redactUrl(service.config.DATABASE_URL)} answers; schema up to date`);
      return;
    } catch (error) {
      const cause = error instanceof MigrationError && error.cause !== undefined ? error.cause : error;
      if (postgresFailureOf(cause) !== 'unavailable') throw error;
    }
    // Stopping ends the wait (the loop then throws).
    await delay(backoff.next(), undefined, { signal: service.signal }).catch(() => {});
  }
}

/**
 * A service's Postgres, its schema migrated to the latest, for a service that can do nothing
 * without it (storage): `openServiceDb`, then waits while Postgres is away (the service is
 * starting meanwhile, and its /readyz names `postgres`); not ready while Postgres does not answer.
 */
export async function connectServiceDb(
  service: ServiceContext<{ DATABASE_URL: string }>,
  options: Omit<CreateDbOptions, 'applicationName'> = {},
): Promise<Kysely<Database>> {
  const opened = await openServiceDb(service, options);
  await opened.migrated;
  return opened.db;
}

/**
 * The raw and record streams made (or brought up to date) with the stream settings, for a
 * service that publishes to or reads them; their fill is exported as metrics.
 */
export async function ensureServiceStreams(service: ServiceContext<StreamConfig>, bus: Bus): Promise<void> {
  await ensureTopology(bus, streamLimitsFrom(service.config));
  streamLevelMetrics(service.metrics, () => streamFill(bus));
}
