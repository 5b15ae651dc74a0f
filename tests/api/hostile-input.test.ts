// Issue 38: every route of the API's OpenAPI document, each of its parameters (path, query) and
// body fields, sent the values that once broke it (1e309 read as Infinity, 0x10 read as 16,
// 20-digit numbers, -1, NUL bytes, empty and huge strings, leap seconds, unicode): no answer is
// a 5xx, every answer that is not a 2xx is application/problem+json with a detail, and a number
// that is not decimal digits within the field's range is a 400 naming the field and its range.
// The walk fails on a route of the document it did not walk.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type App, buildApp } from '@tracehub/api';
import { CONTROL_COMMANDS, commandSchemas } from '@tracehub/api-contract';
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ControlBackends, controlBackends } from '../support/scripted-qs-link.js';
import { storeStpFixture } from '../support/stp-fixture-session.js';
import { CONTROL_TOKEN, READ_TOKEN, testApiSettings } from './fixture-data.js';

let backends: ControlBackends;
let app: App;
let port: number;
const auth = { authorization: `Bearer ${CONTROL_TOKEN}` };
const RIG = 'rigH';
const LINK = 'qs0';

/** The session `{id}` of /sessions routes stands for: the QS session, then an STP one. */
let sessionUnderTest = '';
const STP_SESSION = 's-hostile-stp';

beforeAll(async () => {
  backends = await controlBackends('hostile', RIG, LINK);
  await storeStpFixture(backends.db, 'coresight_issue27', {
    rig: RIG,
    link: 'stm0',
    session: STP_SESSION,
    startNs: T0 + 120_000_000_000n,
  });
  app = await buildApp({
    db: backends.db,
    bus: backends.bus,
    settings: testApiSettings({ controlTimeoutMs: 2000 }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await app?.close();
  await backends?.close();
});

interface ParamSchema {
  type?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  format?: string;
  items?: ParamSchema;
  properties?: Record<string, ParamSchema>;
  required?: string[];
  anyOf?: ParamSchema[];
  enum?: unknown[];
  default?: unknown;
}
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: ParamSchema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: ParamSchema }> };
}
interface Answer {
  status: number;
  type: string;
  body: string;
}

/** Values that are not numbers a field takes, whatever its range: each must be a 400 naming the field. */
const NOT_NUMBERS = [
  '1e309',
  '-1e309',
  '0x10',
  '99999999999999999999',
  '1.5e3',
  '',
  ' 1',
  '+1',
  'NaN',
  'Infinity',
  '1_0',
];
/** Values any parameter gets: none may be a 5xx. */
const ANY_VALUES = [
  'a\u0000b',
  '\u0000',
  '',
  'x'.repeat(3000),
  '2016-12-31T23:59:60Z',
  '2026-02-30T00:00:00Z',
  '99999999999999999999',
  '1e309',
  '0x10',
  '-1',
  '0',
  'ü漢字🙂\u202e',
  '../..',
  "'; select pg_sleep(1); --",
  '%FF',
];

const isNumeric = (s: ParamSchema | undefined) => s?.type === 'integer' || s?.type === 'number';
/** The numeric schema of a parameter: itself, or its items for a list. */
const numericOf = (s: ParamSchema) =>
  isNumeric(s) ? s : s.type === 'array' && isNumeric(s.items) ? s.items : undefined;

/** A valid value for a parameter the walk does not test at the moment, by name and route. */
function validParam(path: string, p: Parameter): string {
  if (p.in === 'path') {
    if (p.name === 'rig') return RIG;
    if (path.startsWith('/api/v1/links/')) return String(backends.stored.linkId);
    if (path.startsWith('/api/v1/sessions/')) return sessionUnderTest;
    return 'r1';
  }
  if (path.endsWith('/timeline')) {
    if (p.name === 'session') return sessionUnderTest;
    if (p.name === 'from') return String(T0);
    if (p.name === 'to') return String(T0 + 60_000_000_000n);
  }
  if (p.name === 'from') return '2026-01-01T00:00:00Z';
  if (p.name === 'to') return '2026-01-02T00:00:00Z';
  if (p.name === 'format') return 'csv';
  if (path === '/api/v1/compare' && (p.name === 'a' || p.name === 'b')) return sessionUnderTest;
  if (p.name === 'series') return 'USER_RECORD:0';
  throw new Error(`no valid value for the required parameter ${p.name} of ${path}: add one to validParam`);
}

/** A valid body of each route that takes one, by "METHOD path". */
function validBody(route: string): Record<string, unknown> {
  const bodies: Record<string, Record<string, unknown>> = {
    'POST /api/v1/links/{id}/commands': { command: { command: 'tick' }, answerTimeoutMs: 50 },
    'PUT /api/v1/links/{id}/settings': { settings: {} },
    'POST /api/v1/reporters': { host: '127.0.0.1', port: 9 },
    'POST /api/v1/sessions/{id}/redecode': {},
    'POST /api/v1/links/{id}/frontend/release': {},
    'DELETE /api/v1/reporters/{id}': {},
    'DELETE /api/v1/rules/{id}': {},
    'POST /api/v1/rules/{id}/backtest': {},
    'POST /api/v1/links/{id}/markers': { comment: 'hostile input walk' },
    'POST /api/v1/links/{id}/time-base': { offsetNs: '0' },
    'POST /api/v1/links/{id}/upload': { data: 'AAAA' },
    'POST /api/v1/rules': { name: 'walked', preset: 'qs-assert' },
    'POST /api/v1/rules/backtest': { name: 'walked', preset: 'qs-assert' },
    'PUT /api/v1/rules/{id}': { name: 'walked', preset: 'qs-assert' },
    'POST /api/v1/rules/{id}/silence': { seconds: 0 },
    'POST /api/v1/alerts/{id}/acknowledge': { by: 'hostile input walk' },
  };
  const body = bodies[route];
  if (!body) throw new Error(`no valid body for ${route}: add one to validBody`);
  return structuredClone(body);
}

/** Sends one request on the listening app (so the live tail is read only up to its head). */
function send(method: string, url: string, payload?: string, contentType = 'application/json'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...auth };
    if (payload !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const req = httpRequest({ host: '127.0.0.1', port, method, path: url, headers }, (res) => {
      const status = res.statusCode ?? 0;
      const type = String(res.headers['content-type'] ?? '');
      if (type.startsWith('text/event-stream')) {
        // A live tail that took its parameters: it would stream until closed.
        req.destroy();
        resolve({ status, type, body: '' });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status, type, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The faults of one answer: a 5xx, or a non-2xx that is not a problem with a detail. */
function faultsOf(what: string, a: Answer): string[] {
  if (a.status >= 500) return [`${what} -> ${a.status} ${a.body.slice(0, 200)}`];
  if (a.status >= 200 && a.status < 300) return [];
  if (!a.type.startsWith('application/problem+json')) return [`${what} -> ${a.status} ${a.type} (not a problem)`];
  try {
    const problem = JSON.parse(a.body) as { status?: number; detail?: unknown };
    if (problem.status !== a.status || typeof problem.detail !== 'string' || problem.detail === '')
      return [`${what} -> ${a.status} ${a.body.slice(0, 200)} (no detail)`];
  } catch {
    return [`${what} -> ${a.status} body is not JSON`];
  }
  return [];
}

/** A number outside the field's rule must be a 400 that names the field and says its range. */
function numberFaults(what: string, field: string, a: Answer): string[] {
  if (a.status !== 400) return [`${what} -> ${a.status}, not 400`];
  const detail = String((JSON.parse(a.body) as { detail?: string }).detail);
  if (!detail.includes(field) || !/(integer|number)/.test(detail)) return [`${what} -> detail ${detail}`];
  return [];
}

/** The values of a numeric field that must be refused: not numbers, or outside its range. */
function refusedNumbers(s: ParamSchema): string[] {
  const values = [...NOT_NUMBERS];
  if (s.minimum !== undefined) values.push(String(s.minimum - 1));
  if (s.maximum !== undefined) values.push(String(s.maximum + 1));
  if (s.type === 'integer') values.push('1.5');
  return values;
}

interface BodyField {
  /** Path of the field in the body, e.g. ['command', 'prio']. */
  at: string[];
  schema: ParamSchema;
  /** The union variant the field is of: its example, and where it goes in the body. */
  variant?: { at: string[]; value: unknown };
}

/**
 * The fields of a body schema, nested objects included (and each variant of a union). A field
 * of a union's variant comes with that variant's example (`variant`, to put at `variant.at`),
 * so the rest of the body is valid for the variant the field belongs to.
 */
function bodyFields(schema: ParamSchema, at: string[] = [], variant?: BodyField['variant']): BodyField[] {
  const fields: BodyField[] = [];
  for (const v of [schema, ...(schema.anyOf ?? [])]) {
    const context = v === schema ? variant : { at, value: exampleOf(v) };
    for (const [name, s] of Object.entries(v.properties ?? {})) {
      fields.push({ at: [...at, name], schema: s, variant: context });
      if (at.length < 3) fields.push(...bodyFields(s, [...at, name], context));
    }
  }
  return fields;
}

/** `body` with `value` at `at` (objects on the way made). */
function withValue(body: Record<string, unknown>, at: string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  let node = copy as Record<string, unknown>;
  for (const part of at.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null || Array.isArray(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[at[at.length - 1]] = structuredClone(value);
  return copy;
}

/** `body` with the field at `at` set to the JSON text `valueJson` (objects on the way made). */
function withField(body: Record<string, unknown>, at: string[], valueJson: string): string {
  const marker = '__hostile_value__';
  const copy = structuredClone(body);
  let node = copy as Record<string, unknown>;
  for (const part of at.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null || Array.isArray(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[at[at.length - 1]] = marker;
  return JSON.stringify(copy).replace(`"${marker}"`, valueJson);
}

/** JSON texts any body field gets: none may be a 5xx. */
const ANY_JSON = [
  '1e309',
  '-1e309',
  '-1',
  '0',
  '1.5',
  '99999999999999999999',
  '"0x10"',
  '"1e309"',
  '""',
  '"a\\u0000b"',
  JSON.stringify('x'.repeat(3000)),
  '"2016-12-31T23:59:60Z"',
  '"ü漢字🙂\\u202e"',
  'null',
  'true',
  '[]',
  '{}',
  `${'['.repeat(500)}${']'.repeat(500)}`,
];
/** JSON texts no numeric body field takes. */
const NOT_JSON_NUMBERS = ['1e309', '-1e309', '99999999999999999999', '"0x10"', '"16"', '""', 'null', 'true', '[]'];

/** The QS-RX command fields (the document says only that `command` is one of them): each command's props. */
function commandFields(): Array<{ command: string; field: string; schema: ParamSchema }> {
  return Object.entries(CONTROL_COMMANDS).flatMap(([command, { props }]) =>
    Object.entries(props).map(([field, schema]) => ({ command, field, schema: schema as ParamSchema })),
  );
}

/** A value a field's schema takes (the first variant of a union; the least number; one item of a list). */
function exampleOf(s: ParamSchema & { const?: unknown; minItems?: number }): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.anyOf) return exampleOf(s.anyOf[0]);
  if (isNumeric(s)) return s.minimum ?? 0;
  if (s.type === 'boolean') return false;
  if (s.type === 'array') return s.minItems ? [exampleOf(s.items ?? {})] : [];
  if (s.type === 'object')
    return Object.fromEntries((s.required ?? []).map((name) => [name, exampleOf(s.properties?.[name] ?? {})]));
  return 'x';
}

/** A command the schema takes, with only its required fields: `{ command: 'peek', offset: 0, size: 1, num: 0 }`. */
function validCommand(command: string): Record<string, unknown> {
  return exampleOf(commandSchemas.get(command) as ParamSchema) as Record<string, unknown>;
}

describe('every route of the OpenAPI document with hostile input', () => {
  it('answers no 5xx, a problem for every refusal, and a 400 naming the field for every number out of rule', async () => {
    const doc = (await app.inject({ url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
    const walked = new Set<string>();
    const faults: string[] = [];
    let requests = 0;
    const ask = async (method: string, url: string, payload?: string, contentType?: string) => {
      requests++;
      return send(method, url, payload, contentType);
    };

    // Routes of a session (and the timeline) are walked with the QS session, then the STP one.
    const walks = routes.flatMap((r) =>
      r.path.startsWith('/api/v1/sessions/{id}') || r.path.endsWith('/timeline')
        ? [backends.stored.session, STP_SESSION].map((session) => ({ ...r, session }))
        : [{ ...r, session: backends.stored.session }],
    );
    for (const { method, path, op, session } of walks) {
      sessionUnderTest = session;
      const route = `${method} ${path}`;
      const params = op.parameters ?? [];
      const base = (override: Record<string, string> = {}, overridePath: Record<string, string> = {}) => {
        const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => {
          if (name in overridePath) return overridePath[name];
          const p = params.find((q) => q.in === 'path' && q.name === name);
          return encodeURIComponent(p ? validParam(path, p) : '1');
        });
        const query = new URLSearchParams();
        for (const p of params)
          if (p.in === 'query' && p.required && p.schema.default === undefined && !(p.name in override))
            query.set(p.name, validParam(path, p));
        for (const [k, v] of Object.entries(override)) query.set(k, v);
        const qs = query.toString();
        return qs ? `${concrete}?${qs}` : concrete;
      };
      const jsonSchema = op.requestBody?.content['application/json']?.schema;
      const bodyOf = () => (jsonSchema ? JSON.stringify(validBody(route)) : undefined);

      // The route with valid input: answered, not a fault (a 4xx such as a 409 is fine).
      faults.push(...faultsOf(`${route} (valid)`, await ask(method, base(), bodyOf())));

      for (const p of params) {
        if (p.in === 'header') continue;
        const numeric = numericOf(p.schema);
        for (const value of ANY_VALUES) {
          // %FF goes into a path as is (a path that does not decode); elsewhere it is text.
          const url =
            p.in === 'path'
              ? base({}, { [p.name]: value === '%FF' ? value : encodeURIComponent(value) })
              : base({ [p.name]: value });
          faults.push(
            ...faultsOf(`${route} ${p.name}=${JSON.stringify(value.slice(0, 30))}`, await ask(method, url, bodyOf())),
          );
        }
        if (numeric)
          for (const value of refusedNumbers(numeric)) {
            const url = p.in === 'path' ? base({}, { [p.name]: encodeURIComponent(value) }) : base({ [p.name]: value });
            const a = await ask(method, url, bodyOf());
            const what = `${route} ${p.name}=${JSON.stringify(value)}`;
            faults.push(...faultsOf(what, a));
            // A path part the router cannot take (blank) is a 404 before any schema: fine.
            if (!(p.in === 'path' && value.trim() === '')) faults.push(...numberFaults(what, p.name, a));
          }
      }

      if (jsonSchema) {
        const valid = validBody(route);
        // The body as a whole: none, not an object, nested deep, not JSON, not JSON at all by type, too large.
        for (const payload of [
          undefined,
          'null',
          '[]',
          '"x"',
          '123',
          `${'['.repeat(500)}${']'.repeat(500)}`,
          '{"a":{"b":{"c":[1,2,3]}}}',
          '{',
          '',
        ])
          faults.push(...faultsOf(`${route} body ${String(payload).slice(0, 20)}`, await ask(method, base(), payload)));
        faults.push(...faultsOf(`${route} text/plain`, await ask(method, base(), 'x', 'text/plain')));
        const large = await ask(method, base(), JSON.stringify({ ...valid, pad: 'x'.repeat(10_000) }));
        faults.push(...faultsOf(`${route} body too large`, large));
        if (large.status !== 413) faults.push(`${route} body too large -> ${large.status}, not 413`);
        for (const { at, schema, variant } of bodyFields(jsonSchema)) {
          const field = at.join('.');
          const valid = !variant
            ? validBody(route)
            : variant.at.length === 0
              ? (structuredClone(variant.value) as Record<string, unknown>)
              : withValue(validBody(route), variant.at, variant.value);
          for (const value of ANY_JSON)
            faults.push(
              ...faultsOf(
                `${route} body ${field}=${value.slice(0, 20)}`,
                await ask(method, base(), withField(valid, at, value)),
              ),
            );
          if (isNumeric(schema))
            for (const value of [...NOT_JSON_NUMBERS, ...refusedNumbers(schema).filter((v) => /^-?[0-9.]+$/.test(v))]) {
              const what = `${route} body ${field}=${value}`;
              const a = await ask(method, base(), withField(valid, at, value));
              faults.push(...faultsOf(what, a), ...numberFaults(what, at[at.length - 1], a));
            }
        }
        if (route === 'POST /api/v1/links/{id}/commands')
          for (const { command, field, schema } of commandFields()) {
            const body = { ...valid, command: validCommand(command) };
            for (const value of ANY_JSON)
              faults.push(
                ...faultsOf(
                  `${route} ${command}.${field}=${value.slice(0, 20)}`,
                  await ask(method, base(), withField(body, ['command', field], value)),
                ),
              );
            if (isNumeric(schema))
              for (const value of NOT_JSON_NUMBERS) {
                const what = `${route} ${command}.${field}=${value}`;
                const a = await ask(method, base(), withField(body, ['command', field], value));
                faults.push(...faultsOf(what, a), ...numberFaults(what, `command.${field}`, a));
              }
          }
      }
      walked.add(route);
    }

    console.log(`${requests} requests over ${walked.size} routes, ${faults.length} faults`);
    expect(faults).toEqual([]);
    // Every route of the document was walked, and the document has the routes it should.
    expect(routes.map((r) => `${r.method} ${r.path}`).filter((r) => !walked.has(r))).toEqual([]);
    expect(walked.size).toBeGreaterThanOrEqual(30);
    expect(walked).toContain('GET /api/v1/live/ws');
    expect(requests).toBeGreaterThan(2000);
  });

  it('gives every numeric parameter and body field of the document a range', async () => {
    const doc = (await app.inject({ url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const unbounded: string[] = [];
    const check = (where: string, s: ParamSchema | undefined) => {
      const numeric = s && numericOf(s);
      if (!numeric) return;
      const low = numeric.minimum ?? numeric.exclusiveMinimum;
      const high = numeric.maximum ?? numeric.exclusiveMaximum;
      if (low === undefined || high === undefined || high > Number.MAX_SAFE_INTEGER) unbounded.push(where);
    };
    let fields = 0;
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        for (const p of op.parameters ?? []) {
          fields++;
          check(`${method} ${path} ${p.name}`, p.schema);
        }
        const body = op.requestBody?.content['application/json']?.schema;
        for (const { at, schema } of body ? bodyFields(body) : []) {
          fields++;
          check(`${method} ${path} body ${at.join('.')}`, schema);
          for (const variant of schema.anyOf ?? []) check(`${method} ${path} body ${at.join('.')}`, variant);
        }
      }
    for (const { command, field, schema } of commandFields()) {
      check(`command ${command}.${field}`, schema);
      for (const variant of schema.anyOf ?? []) check(`command ${command}.${field}`, variant);
    }
    expect(fields).toBeGreaterThan(50);
    expect(unbounded).toEqual([]);
  });
});

describe('request bodies', () => {
  it('have a schema on every route that may carry one (POST, PUT, PATCH, DELETE)', async () => {
    const doc = (await app.inject({ url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const unchecked = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method, op]) => ['post', 'put', 'patch', 'delete'].includes(method) && !op.requestBody)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(unchecked).toEqual([]);
  });
});

describe('refusals of routing and access', () => {
  it('answers an unknown route, a wrong method, a missing or weak token and a plain GET of the WebSocket as problems', async () => {
    const cases: Array<[method: string, url: string, headers: Record<string, string>, status: number, detail: RegExp]> =
      [
        ['GET', '/api/v1/no-such-route', auth, 404, /no route GET \/api\/v1\/no-such-route/],
        // Under a session, beside its real routes: a wrong path, not a wrong method.
        ['GET', `/api/v1/sessions/${backends.stored.session}/records`, auth, 404, /no route GET \/api\/v1\/sessions/],
        ['DELETE', '/api/v1/sessions', auth, 405, /does not take DELETE: it takes GET, HEAD/],
        ['PATCH', `/api/v1/links/${backends.stored.linkId}/settings`, auth, 405, /takes GET, HEAD, PUT/],
        ['GET', '/api/v1/sessions', {}, 401, /bearer token/],
        [
          'POST',
          `/api/v1/sessions/${backends.stored.session}/redecode`,
          { authorization: `Bearer ${READ_TOKEN}` },
          403,
          /control/,
        ],
        ['GET', '/api/v1/live/ws', auth, 426, /WebSocket/],
      ];
    for (const [method, url, headers, status, detail] of cases) {
      const res = await app.inject({ method: method as 'GET', url, headers });
      expect(res.statusCode, `${method} ${url}`).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status, detail: expect.stringMatching(detail) });
    }
    const wrongMethod = await app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers: auth });
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
  });
});

describe('a WebSocket upgrade with a parameter out of rule', () => {
  it('is refused with a 400 problem before the upgrade', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/live/ws?prio=1e309&access_token=${READ_TOKEN}`);
    const refusal = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      ws.on('open', () => reject(new Error('the upgrade was taken')));
      ws.on('error', () => {});
      ws.on('unexpected-response', (_req, res: IncomingMessage) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      });
    });
    ws.terminate();
    expect(refusal.status).toBe(400);
    expect(refusal.type).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(refusal.body).detail).toMatch(/prio: must be an integer from 0 to 255/);
  });
});
