// The api as the api and PalmTrace tests call it (`app.inject`, or on a port they listen on):
// built on a database and a bus of the test file's own, with the test settings.
import { type ApiSettings, type App, buildApp } from '@tracehub/api';
import { expect } from 'vitest';
import { READ_TOKEN, testApiSettings } from '../api/fixture-data.js';
import { onTestBackends, type TestBackends, type TestBackendsOptions } from './test-backends.js';

export interface TestApi extends TestBackends {
  app: App;
  /** Closes the api, then the backends (see `TestBackends.close`). */
  close(): Promise<void>;
}

/**
 * `testBackends(label, options)` and the api on them, ready, with `testApiSettings(settings)`.
 */
export async function testApi(
  label: string,
  options: TestBackendsOptions & { settings?: Partial<ApiSettings> } = {},
): Promise<TestApi> {
  const { backends, app, close } = await onTestBackends(label, options, async ({ db, bus }) => {
    const app = await buildApp({ db, bus, settings: testApiSettings(options.settings) });
    await app.ready();
    return { app, close: () => app.close() };
  });
  return { ...backends, app, close };
}

/** Runs `use` on a second api on the same database and bus with other settings, then closes it. */
export async function withApiSettings<T>(
  backends: Pick<TestBackends, 'db' | 'bus'>,
  settings: Partial<ApiSettings>,
  use: (app: App) => Promise<T>,
): Promise<T> {
  const app = await buildApp({ db: backends.db, bus: backends.bus, settings: testApiSettings(settings) });
  try {
    return await use(app);
  } finally {
    await app.close();
  }
}

/**
 * Expects a read of `url` (with the read token) on a second api whose scan limit is 1 000 bytes
 * to be refused with a 422 saying it would scan more.
 */
export async function expectScanLimited(backends: Pick<TestBackends, 'db' | 'bus'>, url: string): Promise<void> {
  await withApiSettings(backends, { scanLimitBytes: 1000 }, async (narrow) => {
    const res = await narrow.inject({ url, headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/would scan more than/);
  });
}
