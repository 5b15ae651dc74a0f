import { T0 } from '@tracehub/tests/support';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi, withApiSettings } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

// A query that cannot finish is made real, not simulated: another connection holds an
// ACCESS EXCLUSIVE lock on every table, so the api's statements wait on Postgres until the
// statement timeout stops them.
const STATEMENT_TIMEOUT_MS = 400;
const auth = { authorization: `Bearer ${READ_TOKEN}` };

let api: TestApi;

beforeAll(async () => {
  api = await testApi('heavy', {
    db: { statementTimeoutMs: STATEMENT_TIMEOUT_MS },
    settings: { statementTimeoutMs: STATEMENT_TIMEOUT_MS, heavyQueries: 1 },
  });
  const { db } = api;
  await storeQsFixture(db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's1', startNs: T0 });
});

afterAll(() => api?.close());

/** Locks every table of the database until `release` is called. */
async function lockEveryTable(): Promise<{ release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: api.fresh.url });
  await client.connect();
  const { rows } = await sql<{ name: string }>`
    select format('%I', tablename) as name from pg_tables where schemaname = 'public'
  `.execute(api.db);
  await client.query('begin');
  await client.query(`lock table ${rows.map((r) => r.name).join(', ')} in access exclusive mode`);
  return {
    release: async () => {
      await client.query('rollback');
      await client.end();
    },
  };
}

describe('heavy requests', () => {
  it('stops a statement at the timeout with a 503 that says what to do, and admits only so many at once', async () => {
    const lock = await lockEveryTable();
    try {
      const started = Date.now();
      const stuck = api.app.inject({ method: 'GET', url: '/api/v1/records?rig=rig1&limit=50', headers: auth });
      // While it waits on Postgres, a second heavy request is turned away at once.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const turnedAway = await api.app.inject({ method: 'GET', url: '/api/v1/timeline?session=s1', headers: auth });
      expect(turnedAway.statusCode).toBe(503);
      expect(turnedAway.headers['retry-after']).toBe('2');
      expect(turnedAway.json().detail).toMatch(/already running 1 heavy requests.*try again in a few seconds/);
      // A light request is not held back by the limit.
      expect((await api.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

      const timedOut = await stuck;
      expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
      expect(timedOut.statusCode).toBe(503);
      expect(timedOut.json().detail).toMatch(
        /ran longer than the 400 ms this server allows and was stopped: narrow the time range or add a rig, link or session filter/,
      );
    } finally {
      await lock.release();
    }
    // Its place is free again, and with the lock gone the same request is answered.
    const answered = await api.app.inject({ method: 'GET', url: '/api/v1/records?rig=rig1&limit=50', headers: auth });
    expect(answered.statusCode).toBe(200);
    expect(answered.json().records).toHaveLength(50);
  });

  it('answers a search that would read more than the scan limit with a 422 asking for a narrower query', async () => {
    // The same api with a limit of 1 kB of records a page; dpp_qv's session holds more.
    await withApiSettings(api, { scanLimitBytes: 1_000 }, async (narrow) => {
      const res = await narrow.inject({
        method: 'GET',
        url: '/api/v1/records?text=no-such-text&limit=10',
        headers: auth,
      });
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json().detail).toMatch(
        /would scan more than 1 kB of records .*: narrow the time range or add a rig, link or session filter/,
      );
      // What a page read is said with every page.
      const ok = await api.app.inject({
        method: 'GET',
        url: '/api/v1/records?text=no-such-text&limit=10',
        headers: auth,
      });
      expect(ok.statusCode).toBe(200);
      expect(Number(ok.headers['x-tracehub-scanned-bytes'])).toBeGreaterThan(1_000);
    });
  });
});
