import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type FreshDatabase,
  freshDatabase,
  makeCertificates,
  PrivateNats,
  PrivatePostgres,
  type ServerCertificates,
} from '@tracehub/tests/support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, everyServiceReady, SERVICE_APPS, startNode, TEST_API_TOKEN, within } from './processes.js';

// A deployment with security on the wire: NATS that takes only TLS connections with a user and
// password, and the API serving HTTPS. The certificates come from infra/certs/make-certs.sh.
const NATS_USER = 'tracehub';
const NATS_PASSWORD = 'wire-password-41b7e2';

let dir: string;
let nats: PrivateNats;
let db: FreshDatabase;

let certs: ServerCertificates;

beforeAll(async () => {
  assertBuilt(SERVICE_APPS.map((a) => `apps/${a}/dist/main.js`));
  dir = mkdtempSync(join(tmpdir(), 'th-tls-'));
  certs = makeCertificates(dir);
  nats = await PrivateNats.start([
    '--tls',
    '--tlscert',
    certs.cert,
    '--tlskey',
    certs.key,
    '--user',
    NATS_USER,
    '--pass',
    NATS_PASSWORD,
  ]);
  db = await freshDatabase('tls');
}, 60_000);

afterAll(async () => {
  await nats?.stop();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function httpsGet(port: number, path: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, ca }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .once('error', reject);
  });
}

describe('security on the wire', () => {
  it('every service reaches a TLS-only NATS with a user and password, and the API serves HTTPS', async () => {
    const env = {
      NATS_URL: `tls://${NATS_USER}:${NATS_PASSWORD}@127.0.0.1:${nats.port}`,
      NATS_TLS_CA: certs.ca,
      DATABASE_URL: db.url,
      HEALTH_PORT: '0',
      API_PORT: '0',
      API_HOST: '127.0.0.1',
      API_TLS_CERT: certs.cert,
      API_TLS_KEY: certs.key,
      API_TOKENS: `${TEST_API_TOKEN}:read`,
    };
    await everyServiceReady(env, async (app, proc) => {
      if (app === 'api') {
        const { port } = JSON.parse(await proc.waitForLine(/"msg":"api on /, 5000));
        const ca = readFileSync(certs.ca);
        expect(await httpsGet(port, '/healthz', ca)).toBe(200);
        // Plain HTTP to the HTTPS port gets no answer a client could mistake for the API's.
        await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
      }
      expect(
        proc.stdout.some((l) => l.includes(NATS_PASSWORD)),
        app,
      ).toBe(false);
    });
  });

  it('refuses to start without the password or without trusting the server, saying which setting to check', async () => {
    const base = { DATABASE_URL: db.url, HEALTH_PORT: '0' };
    const cases = [
      { NATS_URL: `tls://127.0.0.1:${nats.port}`, NATS_TLS_CA: certs.ca },
      { NATS_URL: `tls://${NATS_USER}:${NATS_PASSWORD}@127.0.0.1:${nats.port}` },
    ];
    await Promise.all(
      cases.map(async (nat) => {
        const proc = startNode('apps/storage/dist/main.js', { ...base, ...nat });
        try {
          const { value } = await within(proc.exited, 30_000, 'storage giving up');
          expect(value).toBe(1);
          const line = JSON.parse(proc.stdout.at(-1) ?? '{}');
          expect(line.msg).toMatch(
            /cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: .*check NATS_URL \(and NATS_CREDS, NATS_TLS_\*/,
          );
          expect(proc.stdout.some((l) => l.includes(NATS_PASSWORD))).toBe(false);
        } finally {
          proc.child.kill('SIGKILL');
        }
      }),
    );
  });

  it('every service reaches a Postgres that takes only TLS, verifying its certificate, and refuses one it cannot trust', async () => {
    const postgres = await PrivatePostgres.start({ tls: { cert: certs.cert, key: certs.key } });
    try {
      const verified = `${postgres.url()}?sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`;
      // The server refuses a connection without TLS.
      const plain = new pg.Client({ connectionString: `${postgres.url()}?sslmode=disable` });
      await expect(plain.connect()).rejects.toThrow(/no encryption|pg_hba/);
      await plain.end().catch(() => {});
      const env = {
        NATS_URL: `tls://${NATS_USER}:${NATS_PASSWORD}@127.0.0.1:${nats.port}`,
        NATS_TLS_CA: certs.ca,
        DATABASE_URL: verified,
        HEALTH_PORT: '0',
        API_PORT: '0',
        API_HOST: '127.0.0.1',
        API_TOKENS: `${TEST_API_TOKEN}:read`,
      };
      await everyServiceReady(
        env,
        async () => {},
        async () => {
          // Their connections to Postgres are encrypted.
          const check = new pg.Client({ connectionString: verified });
          await check.connect();
          const { rows } = await check.query(
            "select count(*)::int as n, bool_and(s.ssl) as all_tls from pg_stat_ssl s join pg_stat_activity a using (pid) where a.backend_type = 'client backend' and a.application_name <> ''",
          );
          await check.end();
          expect(rows[0].n).toBeGreaterThan(0);
          expect(rows[0].all_tls).toBe(true);
        },
      );
      // A server whose certificate the service cannot verify (no CA given): it does not start, and says what to check.
      const untrusted = startNode('apps/storage/dist/main.js', {
        ...env,
        DATABASE_URL: `${postgres.url()}?sslmode=verify-full`,
      });
      try {
        const { value } = await within(untrusted.exited, 30_000, 'storage giving up');
        expect(value).toBe(1);
        expect(JSON.parse(untrusted.stdout.at(-1) ?? '{}').msg).toMatch(
          /cannot connect to Postgres at .*check DATABASE_URL/,
        );
      } finally {
        untrusted.child.kill('SIGKILL');
      }
    } finally {
      await postgres.stop();
    }
  });
});
