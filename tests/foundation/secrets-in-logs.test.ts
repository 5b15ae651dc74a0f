import { type FreshDatabase, freshDatabase, natsUrl, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, backendsEnv, removeBusPrefix, startNode, within } from './processes.js';

// The built api process, its log read as an operator would: no token or password may appear
// in any line, whatever the request or the configuration mistake.
const READ_TOKEN = 'reader-token-7c1f0e92ab34';
const CONTROL_TOKEN = 'operator-token-5d8e61b0cf27';
const DB_PASSWORD = 'db-password-9a41c3';
const NATS_PASSWORD = 'nats-password-2be7d5';

let db: FreshDatabase;
const prefix = uniquePrefix('secrets');

beforeAll(async () => {
  assertBuilt(['apps/api/dist/main.js']);
  db = await freshDatabase('secrets');
});

afterAll(async () => {
  await db?.drop();
  await removeBusPrefix(natsUrl(), prefix);
});

/** `url` with the user's password set to DB_PASSWORD (the test server trusts any). */
function withPassword(url: string): string {
  const u = new URL(url);
  u.password = DB_PASSWORD;
  return u.toString();
}

/** The file's NATS, database and bus prefix, as the api reads them. */
const backends = () => backendsEnv({ natsUrl: natsUrl(), databaseUrl: db.url, prefix });

function expectNoSecret(lines: string[]): void {
  for (const secret of [READ_TOKEN, CONTROL_TOKEN, DB_PASSWORD, NATS_PASSWORD]) {
    expect(lines.filter((l) => l.includes(secret))).toEqual([]);
  }
}

describe('the api never logs a secret', () => {
  it('names a malformed API_TOKENS and a URL with a password without their values', async () => {
    const env = { ...backends(), HEALTH_PORT: '0', API_PORT: '0', API_TOKENS: `${READ_TOKEN}:read` };
    const cases = [
      { env: { ...env, API_TOKENS: `${CONTROL_TOKEN}:read+contrl` }, code: 2, says: /API_TOKENS \(a secret/ },
      // A database that does not exist (a Postgres that cannot be reached is waited for instead).
      {
        env: { ...env, DATABASE_URL: withPassword(`${db.url}_missing`) },
        code: 1,
        says: /cannot connect to Postgres at postgres:\/\/postgres:\*\*\*@[^ ]+_missing: .*does not exist/,
      },
      {
        env: { ...env, NATS_URL: `nats://tracehub:${NATS_PASSWORD}@127.0.0.1:1` },
        code: 1,
        says: /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: /,
      },
      {
        env: { ...env, DATABASE_URL: `mysql://root:${DB_PASSWORD}@127.0.0.1/x` },
        code: 2,
        says: /DATABASE_URL="mysql:\/\/root:\*\*\*@127\.0\.0\.1\/x" is not a Postgres URL/,
      },
    ];
    await Promise.all(
      cases.map(async ({ env, code, says }) => {
        const api = startNode('apps/api/dist/main.js', env);
        try {
          const { value } = await within(api.exited, 30_000, 'the api giving up');
          expect(value).toBe(code);
          expect(api.stdout.map((l) => JSON.parse(l).msg).join('\n')).toMatch(says);
          expectNoSecret([...api.stdout, ...api.stderr]);
        } finally {
          api.child.kill('SIGKILL');
        }
      }),
    );
  });

  it('writes query-string tokens as *** in its request log, and takes them only where a browser needs them', async () => {
    const api = startNode('apps/api/dist/main.js', {
      ...backends(),
      HEALTH_PORT: '0',
      API_PORT: '0',
      API_HOST: '127.0.0.1',
      API_TOKENS: `${READ_TOKEN}:read,${CONTROL_TOKEN}:read+control`,
      // Request lines are logged at debug.
      LOG_LEVEL: 'debug',
    });
    try {
      const { port } = JSON.parse(await api.waitForLine(/"msg":"api on /, 45_000));
      const base = `http://127.0.0.1:${port}/api/v1`;
      // A download link and an EventSource carry the token in the query: accepted, read only.
      const exported = await fetch(`${base}/records/export?format=ndjson&rig=none&access_token=${READ_TOKEN}`);
      expect(exported.status).toBe(200);
      await exported.text();
      const sse = new AbortController();
      const live = await fetch(`${base}/live/sse?access_token=${CONTROL_TOKEN}`, { signal: sse.signal });
      expect(live.status).toBe(200);
      sse.abort();
      // Everywhere else a token goes in the header; in the query it is refused (and not logged).
      const rigs = await fetch(`${base}/rigs?access_token=${READ_TOKEN}`);
      expect(rigs.status).toBe(401);
      expect(((await rigs.json()) as { detail: string }).detail).toMatch(
        /query string is accepted only on live streams and export downloads/,
      );
      const command = await fetch(`${base}/links/1/commands?access_token=${CONTROL_TOKEN}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: { command: 'info' } }),
      });
      expect(command.status).toBe(401);
      const withHeader = await fetch(`${base}/rigs`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
      expect(withHeader.status).toBe(200);

      api.child.kill('SIGTERM');
      await within(api.exited, 10_000, 'the api stopping');
      const requestLines = api.stdout.filter((l) => l.includes('"req":'));
      expect(requestLines.some((l) => l.includes('access_token=***'))).toBe(true);
      expectNoSecret([...api.stdout, ...api.stderr]);
    } finally {
      api.child.kill('SIGKILL');
    }
  });
});
