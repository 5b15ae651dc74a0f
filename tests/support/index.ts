import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { inject } from 'vitest';

import './provided-context.js';

export { fixturePath, fixturesDir, qspyLines, sharedDir } from './paths.js';
export { peakRssMb } from './peak-rss.js';
export { type QspySequence, qspySequence } from './qspy-sequence.js';
export { readThenClose } from './read-then-close.js';
export { recordBatchOf } from './record-batch.js';
export { seededRandom } from './seeded-random.js';
export { T0 } from './time-zero.js';
export { transitionRecord } from './transition-record.js';

/** URL of the NATS server (JetStream enabled) for this test run. */
export function natsUrl(): string {
  return process.env.NATS_URL ?? inject('natsUrl');
}

/** URL of a Postgres server for this test run (use `freshDatabase` to get a database of your own). */
export function databaseUrl(): string {
  return process.env.DATABASE_URL ?? inject('databaseUrl');
}

/**
 * A prefix unique to this test file (or call), for stream names, subjects and KV buckets:
 * `busNames(uniquePrefix())` keeps a test's traffic apart from every other test's.
 */
export function uniquePrefix(label = 't'): string {
  return `${label.replace(/[^A-Za-z0-9]/g, '')}${randomBytes(4).toString('hex')}`;
}

export interface FreshDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A database of its own for one test file, named after `label`, not made yet: `create()` makes it. */
export interface PlannedDatabase extends FreshDatabase {
  create(): Promise<void>;
}

/**
 * The name and URL of a database of its own for one test file, known before the database is
 * made (`create()`); `drop()` removes it (call it in afterAll).
 */
export function plannedDatabase(label = 'th'): PlannedDatabase {
  const name = `${label.replace(/[^a-z0-9_]/gi, '').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  const url = new URL(databaseUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    create: () => asAdmin(`create database "${name}"`),
    drop: () => asAdmin(`drop database if exists "${name}" with (force)`),
  };
}

/** Creates an empty database for one test file; `drop()` removes it (call it in afterAll). */
export async function freshDatabase(label = 'th'): Promise<FreshDatabase> {
  const { create, ...database } = plannedDatabase(label);
  await create();
  return database;
}

/** Runs one statement on the server's `postgres` database (creating or dropping one of the tests'). */
async function asAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function adminUrl(): string {
  const url = new URL(databaseUrl());
  url.pathname = '/postgres';
  return url.toString();
}

/** Absolute path of the repository root. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export { NatsOperator } from './nats-operator.js';
export { freePort, natsServerBinary, PrivateNats, PrivateNatsCluster, waitForPort } from './private-nats.js';
export { PrivatePostgres } from './private-postgres.js';
export { CuttableTcpProxy } from './tcp-proxy.js';
export { makeCertificates, makeClientCertificate, type ServerCertificates } from './test-certificates.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Asks `probe` every `everyMs` until it answers something other than `undefined` or `false`,
 * and resolves with that answer; throws after `timeoutMs`, naming `what`.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Polls `check` every 100 ms until it is true; throws after `timeoutMs`, naming `what`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}
