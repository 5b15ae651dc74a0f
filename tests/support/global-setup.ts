import type { TestProject } from 'vitest/node';

/**
 * Runs once per `vitest run`. Services come from NATS_URL / DATABASE_URL when set (CI and the
 * dev machine); otherwise NATS (with JetStream) and Postgres 16 are started with testcontainers
 * and stopped at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<unknown>> = [];
  let natsUrl = process.env.NATS_URL;
  let databaseUrl = process.env.DATABASE_URL;
  if (!natsUrl || !databaseUrl) {
    const { GenericContainer, Wait } = await import('testcontainers');
    if (!natsUrl) {
      const nats = await new GenericContainer('nats:2.10')
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start();
      stops.push(() => nats.stop());
      natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
    }
    if (!databaseUrl) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const pg = await new PostgreSqlContainer('postgres:16').start();
      stops.push(() => pg.stop());
      databaseUrl = pg.getConnectionUri();
    }
  }
  await sweepStaleTestStreams(natsUrl);
  project.provide('natsUrl', natsUrl);
  project.provide('databaseUrl', databaseUrl);
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}

import './provided-context.js';

/**
 * Test files remove their streams when they end; a run that was killed cannot. Streams of
 * test prefixes (`<label><8 hex>_...`) older than an hour are removed here, because JetStream
 * reserves every stream's max_bytes and leftovers would end up refusing new streams.
 */
async function sweepStaleTestStreams(url: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: url, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc);
    const hourAgo = Date.now() - 3600_000;
    for await (const info of jsm.streams.list()) {
      const name = info.config.name;
      if (!/^(KV_)?[a-z]+[0-9a-f]{8}_/.test(name)) continue;
      if (Date.parse(info.created) < hourAgo) await jsm.streams.delete(name).catch(() => {});
    }
  } finally {
    await nc.close();
  }
}
