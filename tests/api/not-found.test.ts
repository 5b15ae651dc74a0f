// With the dashboard served beside the API, its wildcard route takes every GET: a GET of a
// path nothing serves is still a wrong path (404), not a wrong method (405).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

const dashboardDir = mkdtempSync(join(tmpdir(), 'th-dashboard-'));
writeFileSync(join(dashboardDir, 'index.html'), '<!doctype html><title>tracehub</title>');
let api: TestApi;

beforeAll(async () => {
  api = await testApi('notfound', { settings: { dashboardDir } });
});

afterAll(async () => {
  await api?.close();
  rmSync(dashboardDir, { recursive: true, force: true });
});

describe('a request nothing serves, with the dashboard served', () => {
  it('is a 404 naming the path for a GET, a 405 naming the methods for a wrong method', async () => {
    const headers = { authorization: `Bearer ${READ_TOKEN}` };
    const page = await api.app.inject({ url: '/' });
    expect(page.statusCode).toBe(200);
    for (const url of ['/api/v1/sessions/s1/records', '/api/v1/no-such-route', '/no-such-file.js']) {
      const res = await api.app.inject({ url, headers });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, detail: `no route GET ${url}` });
    }
    const wrongMethod = await api.app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
  });
});
