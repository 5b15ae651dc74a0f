import { type AddressInfo, connect } from 'node:net';
import { type App, buildApp } from '@tracehub/api';
import { type Bus, connectBus } from '@tracehub/bus';
import { createDb, type Database, migrateToLatest } from '@tracehub/db';
import { CuttableTcpProxy, type FreshDatabase, freshDatabase, natsUrl, uniquePrefix } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, testApiSettings } from './fixture-data.js';

// Issue 14 items 4 and 9: bad input is a 400 naming the field, never a 500; a database that is
// away is a 503 that says so, and /readyz turns 503.
let fresh: FreshDatabase;
let proxy: CuttableTcpProxy;
let db: Kysely<Database>;
let bus: Bus;
let app: App;
const auth = { authorization: `Bearer ${CONTROL_TOKEN}` };

beforeAll(async () => {
  fresh = await freshDatabase('badinput');
  const url = new URL(fresh.url);
  proxy = new CuttableTcpProxy(url.hostname, Number(url.port || 5432));
  await proxy.open();
  url.host = `127.0.0.1:${proxy.listenPort}`;
  db = createDb(url.toString(), { connectTimeoutMs: 1000 });
  await migrateToLatest(db);
  bus = await connectBus({ url: natsUrl(), name: 'badinput-test', prefix: uniquePrefix('badin') });
  app = await buildApp({ db, bus, settings: testApiSettings() });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await bus?.close();
  await db?.destroy();
  await proxy?.cut();
  await fresh?.drop();
});

/** A cursor whose host time has 20 digits (past Postgres's bigint). */
const hugeCursor = Buffer.from(JSON.stringify(['r1', 'desc', 'after', '99999999999999999999', 's', '1'])).toString(
  'base64url',
);
const hugeSessionCursor = Buffer.from(JSON.stringify(['s1', '99999999999999999999', 's'])).toString('base64url');

/** Hostile values for a parameter, by name. */
function hostileValues(name: string): string[] {
  const values = ['a\u0000b', '\u0000'];
  if (name === 'from' || name === 'to') values.push('2026-01-01T23:59:60Z', '2026-02-30T00:00:00Z');
  if (name === 'cursor') values.push(hugeCursor, hugeSessionCursor);
  return values;
}

interface Operation {
  parameters?: Array<{ name: string; in: 'query' | 'path' }>;
}

describe('every route with hostile parameters', () => {
  it('answers 4xx naming the parameter, never 500', async () => {
    const doc = (await app.inject({ url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    let requests = 0;
    const failures: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      const op = operations.get;
      // A live tail that validates its parameters streams until closed: checked below with a bad one.
      if (!op || path.includes('/live/')) continue;
      const params = op.parameters ?? [];
      // Required query parameters other than the one under test get a valid value, so the answer is about that one.
      const required: Record<string, string> = {
        ...(path.endsWith('/export') ? { format: 'csv' } : {}),
        ...(path.endsWith('/timeline') ? { session: 's1' } : {}),
        ...(path.endsWith('/rates') ? { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } : {}),
        ...(path.includes('/series') ? { series: 'PHILO_STAT:values.0' } : {}),
      };
      const concrete = (values: Record<string, string>) =>
        path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(values[n] ?? '1'));
      for (const param of params) {
        for (const value of hostileValues(param.name)) {
          const url =
            param.in === 'path'
              ? concrete({ [param.name]: value })
              : `${concrete({})}?${new URLSearchParams({ ...required, [param.name]: value })}`;
          const res = await app.inject({ url, headers: auth });
          requests++;
          if (res.statusCode >= 500 || (res.statusCode === 400 && !res.body.includes(param.name)))
            failures.push(`${url} -> ${res.statusCode} ${res.body}`);
        }
      }
    }
    for (const value of hostileValues('text')) {
      const res = await app.inject({ url: `/api/v1/live/sse?${new URLSearchParams({ text: value })}`, headers: auth });
      requests++;
      if (res.statusCode !== 400 || !res.body.includes('text'))
        failures.push(`live text=${value} -> ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(50);
  });

  it('says which values a parameter allows instead of schema text', async () => {
    const res = await app.inject({ url: '/api/v1/records?kind=nonsense', headers: auth });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/kind/);
    expect(res.json().detail).toMatch(/record, dict, info, marker, error/);
    expect(res.json().detail).not.toMatch(/equal to constant/);
  });
});

describe('refusals before a route runs', () => {
  it('answers a path that does not decode and an id too long as problems', async () => {
    for (const [url, status, detail] of [
      ['/api/v1/sessions/%FF%FE', 400, /does not decode/],
      [`/api/v1/sessions/${'x'.repeat(5000)}`, 414, /longer than this server takes/],
    ] as const) {
      const res = await app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode, url.slice(0, 40)).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status, detail: expect.stringMatching(detail) });
    }
  });

  it('answers a request head larger than Node takes (a 60 KB query string) as a problem', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET /api/v1/sessions?rig=${'r'.repeat(60_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d) => {
        text += d.toString('latin1');
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(body)).toMatchObject({
      status: 431,
      detail: expect.stringMatching(/larger than this server takes/),
    });
  });
});

describe('a body where none is taken', () => {
  it('refuses anything but no body or {} for a re-decode, by its body schema, before looking the session up', async () => {
    for (const [payload, detail] of [
      ['null', /^body: must be a JSON object$/],
      ['[]', /^body: must be a JSON object$/],
      ['"x"', /^body: must be a JSON object$/],
      ['123', /^body: must be a JSON object$/],
      ['{"a":{"b":{"c":[1,2,3]}}}', /^body: takes no field "a" \(it has no fields\)$/],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/sessions/no-such-session/redecode',
        headers: { ...auth, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, payload).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().detail).toMatch(detail);
    }
    // No body, and {}, go on to the session (which does not exist here).
    for (const payload of [undefined, '{}']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/sessions/no-such-session/redecode',
        headers: payload === undefined ? auth : { ...auth, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, String(payload)).toBe(404);
    }
  });
});

describe('Postgres away', () => {
  it('answers 503 with a problem that says the database is unavailable, and /readyz 503', async () => {
    expect((await app.inject({ url: '/api/v1/sessions', headers: auth })).statusCode).toBe(200);
    await proxy.cut();
    try {
      const res = await app.inject({ url: '/api/v1/sessions', headers: auth });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json().detail).toMatch(/database/);
      const ready = await app.inject({ url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().failing).toContain('postgres');
    } finally {
      await proxy.open();
    }
    expect((await app.inject({ url: '/api/v1/sessions', headers: auth })).statusCode).toBe(200);
  });
});
