// Debian's headless Chromium through playwright-core, with a fresh profile per test file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { repoRoot } from './index.js';

export interface TestBrowser {
  browser: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'th-chromium-'));
  // playwright passes the profile as --user-data-dir.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  return {
    browser,
    page,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The dashboard as CI builds it, into `test-output/<folder>` (a folder of the test's own). */
export async function buildDashboard(folder: string): Promise<string> {
  const outDir = join(repoRoot, 'test-output', folder);
  await build({ root: join(repoRoot, 'apps', 'dashboard'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
  return outDir;
}
