// The dashboard as the browser tests look at it: built, served by the api on a port of its own,
// and open in Chromium.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type ApiSettings, type App, buildApp } from '@tracehub/api';
import type { Bus } from '@tracehub/bus';
import type { Database } from '@tracehub/db';
import type { Kysely } from 'kysely';
import type { Page } from 'playwright-core';
import { testApiSettings } from '../api/fixture-data.js';
import { buildDashboard, launchChromium, type TestBrowser } from './chromium.js';
import { repoRoot } from './index.js';
import { onTestBackends, type TestBackends } from './test-backends.js';

/** Where the browser tests keep their screenshots. */
export const screenshotsDir = join(repoRoot, 'test-output', 'browser');

export interface ServedDashboard {
  app: App;
  /** The dashboard's origin: `http://127.0.0.1:<port>`. */
  base: string;
  chrome: TestBrowser;
  page: Page;
  /** Opens the dashboard at `#<hash>` with `token` in the URL (the page keeps it in localStorage). */
  signIn(token: string, hash: string): Promise<void>;
  /** Closes Chromium, then the api. */
  close(): Promise<void>;
}

/**
 * Builds the dashboard into `test-output/<folder>` (a folder of the test's own), serves it with
 * the api on `db` and `bus` (test settings with `settings` over them) on a free port, and opens
 * Chromium 1400 px wide and `height` px tall.
 */
export async function serveDashboard(
  folder: string,
  backends: { db: Kysely<Database>; bus: Bus },
  options: { height: number; settings?: Partial<ApiSettings> },
): Promise<ServedDashboard> {
  mkdirSync(screenshotsDir, { recursive: true });
  const dist = await buildDashboard(folder);
  const app = await buildApp({ ...backends, settings: testApiSettings({ ...options.settings, dashboardDir: dist }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  // The api is closed here if Chromium does not start: the test's afterAll has nothing to close.
  const chrome = await launchChromium({ width: 1400, height: options.height }).catch(async (err) => {
    await app.close();
    throw err;
  });
  return {
    app,
    base,
    chrome,
    page: chrome.page,
    signIn: async (token, hash) => {
      await chrome.page.goto(`${base}/?token=${token}#${hash}`);
    },
    close: async () => {
      await chrome.close();
      await app.close();
    },
  };
}

export type DashboardOnBackends = ServedDashboard & { backends: TestBackends };

/**
 * The world of a dashboard test: `testBackends(label)` (with topology if asked), `seed` run on
 * them, then the dashboard served on them (`serveDashboard(folder, ...)`); `close()` closes
 * Chromium, the api, then the backends.
 */
export function dashboardOnFreshBackends(
  label: string,
  options: {
    folder: string;
    height: number;
    settings?: Partial<ApiSettings>;
    topology?: boolean;
    seed?: (backends: TestBackends) => Promise<void>;
  },
): Promise<DashboardOnBackends> {
  return onTestBackends(label, { topology: options.topology }, async (backends) => {
    await options.seed?.(backends);
    return serveDashboard(options.folder, backends, options);
  });
}
