import { type FreshDatabase, freshDatabase, natsUrl, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  backendsEnv,
  everyServiceReady,
  httpStatus,
  removeBusPrefix,
  SERVICE_APPS,
  startNode,
  within,
} from './processes.js';

// One database and one bus prefix for the whole file, its tests one after the other: every
// prefix gets its own streams, and JetStream reserves their byte limits on disk.
let db: FreshDatabase;
const prefix = uniquePrefix('services');

beforeAll(async () => {
  assertBuilt([
    'scripts/start-all.mjs',
    'packages/db/dist/migrate-cli.js',
    ...SERVICE_APPS.map((a) => `apps/${a}/dist/main.js`),
  ]);
  db = await freshDatabase('services');
});

afterAll(async () => {
  await db?.drop();
  await removeBusPrefix(natsUrl(), prefix);
});

/** The file's NATS, database and bus prefix, as the services read them. */
const backends = () => backendsEnv({ natsUrl: natsUrl(), databaseUrl: db.url, prefix });

/** The one line a process wrote, parsed; fails when it wrote more, or anything on stderr. */
function onlyLine(stdout: string[], stderr: string[]): { level: string; msg: string } {
  expect(stderr).toEqual([]);
  expect(stdout).toHaveLength(1);
  return JSON.parse(stdout[0]);
}

describe('every service', () => {
  it('starts on its own, answers /readyz, and stops within 5 s of SIGTERM', async () => {
    // All at once on one fresh database: the migrations meet and must not trip over each other.
    await everyServiceReady({ ...backends(), HEALTH_PORT: '0' }, async (app, proc, ready) => {
      if (app === 'storage') {
        // Its lag, read from the durable consumer when scraped.
        const metrics = await (await fetch(`http://127.0.0.1:${ready.healthPort}/metrics`)).text();
        expect(metrics).toMatch(/^tracehub_storage_pending_messages\{state="waiting"[^}]*\} 0$/m);
        expect(metrics).toMatch(/^tracehub_storage_pending_messages\{state="unacked"[^}]*\} 0$/m);
      }
      proc.child.kill('SIGTERM');
      const { value: code } = await within(proc.exited, 5000, `stopping ${app}`);
      expect(code, app).toBe(0);
      expect(proc.stderr, app).toEqual([]);
    });
  });

  it('gives one clear line and a non-zero exit for a wrong NATS_URL, DATABASE_URL or setting', async () => {
    const good = { ...backends(), HEALTH_PORT: '0' };
    const cases = [
      {
        app: 'storage',
        env: { ...good, NATS_URL: 'nats://127.0.0.1:1' },
        code: 1,
        says: /^cannot start: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: .*NATS_URL/,
      },
      {
        app: 'gateway',
        env: { ...good, NATS_URL: 'nats://127.0.0.1:1' },
        code: 1,
        says: /^cannot start: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: .*NATS_URL/,
      },
      // A Postgres that cannot be reached is waited for (tests/pipeline/postgres-start.test.ts);
      // a database that does not exist is a wrong setting.
      {
        app: 'api',
        env: { ...good, DATABASE_URL: `${db.url}_missing` },
        code: 1,
        says: /^cannot start: cannot connect to Postgres at .*database ".*_missing" does not exist.*DATABASE_URL/,
      },
      {
        app: 'decoder-qs',
        env: { ...good, DATABASE_URL: `${db.url}_missing` },
        code: 1,
        says: /^cannot start: .*Postgres.*database ".*_missing" does not exist/,
      },
      {
        app: 'decoder-stp',
        env: { ...good, NATS_URL: 'localhost:4222' },
        code: 2,
        says: /^invalid configuration: NATS_URL="localhost:4222" is not a NATS URL/,
      },
    ];
    // The limit is generous for a shared 2-core machine: most of it is Node starting up; the
    // give-up itself is immediate (connection refused) or bounded by the 5 s connect timeouts.
    await Promise.all(
      cases.map(async ({ app, env, code, says }) => {
        const proc = startNode(`apps/${app}/dist/main.js`, env);
        try {
          const { value } = await within(proc.exited, 30_000, `${app} giving up`);
          expect(value, app).toBe(code);
          const line = onlyLine(proc.stdout, proc.stderr);
          expect(line.level, app).toBe('fatal');
          expect(line.msg, app).toMatch(says);
        } finally {
          proc.child.kill('SIGKILL');
        }
      }),
    );
  });
});

describe('npm start', () => {
  it('brings every service up, each answers /readyz, and SIGTERM stops them all within 5 s', async () => {
    const start = startNode('scripts/start-all.mjs', { ...backends(), TRACEHUB_HEALTH_PORT_BASE: '0' });
    try {
      await start.waitForLine(/\| +api +\d+ +http/, 30_000);
      const ports = new Map<string, number>();
      for (const line of start.stdout) {
        const m = /^start +\| +(\S+) +(\d+) +http/.exec(line);
        if (m) ports.set(m[1], Number(m[2]));
      }
      // Without TRACEHUB_LINKS no gateway runs: it would have no link to read.
      expect([...ports.keys()].sort()).toEqual(['api', 'decoder-qs', 'decoder-stp', 'storage']);
      for (const app of ports.keys()) await start.waitForLine(new RegExp(`^${app} +\\| .*"msg":"ready`), 45_000);
      for (const [app, port] of ports) {
        expect(await httpStatus(port, '/readyz'), app).toBe(200);
        expect(await httpStatus(port, '/healthz'), app).toBe(200);
      }

      start.child.kill('SIGTERM');
      const { value: code } = await within(start.exited, 5000, 'stopping every service');
      expect(code).toBe(0);
      for (const app of ports.keys())
        expect(start.stdout.some((l) => new RegExp(`^${app} +\\| .*"msg":"stopped"`).test(l))).toBe(true);
      expect(start.stdout.at(-1)).toMatch(/every service stopped/);
      expect(start.stderr).toEqual([]);
    } finally {
      // SIGTERM first: the services run in their own process groups and stop only when told.
      if (start.child.exitCode === null) {
        start.child.kill('SIGTERM');
        await within(start.exited, 10_000, 'stopping after a failure').catch(() => start.child.kill('SIGKILL'));
      }
    }
  });
});
