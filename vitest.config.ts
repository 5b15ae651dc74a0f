import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

// Test files run in forks that inherit this environment: glibc's malloc as `npm start` gives
// the services (scripts/start-all.mjs), so a test that bounds a process's resident memory
// measures what the services would hold, not how many malloc arenas V8's threads opened.
process.env.MALLOC_ARENA_MAX ??= '2';
process.env.MALLOC_MMAP_THRESHOLD_ ??= '131072';
const packages = [
  'contracts',
  'api-contract',
  'qs',
  'stp',
  'palmtrace',
  'palmtrace-bridge',
  'live',
  'bus',
  'link',
  'db',
  'service-kit',
  'decoder-service',
  'decoders',
  'qspy-frontend',
];
const apps = ['gateway', 'decoder-qs', 'decoder-stp', 'storage', 'api', 'cli'];

// Tests run against the TypeScript sources, so `npm test` needs no build first.
const alias = [
  { find: '@tracehub/tests/support', replacement: `${root}tests/support/index.ts` },
  // Subpaths of contracts without the TypeBox schema (see its package.json exports).
  {
    find: /^@tracehub\/contracts\/(decoded-record|names|export-formats|record-names|output-buffer)$/,
    replacement: `${root}packages/contracts/src/$1.ts`,
  },
  ...packages.map((p) => ({ find: new RegExp(`^@tracehub/${p}$`), replacement: `${root}packages/${p}/src/index.ts` })),
  ...apps.map((a) => ({ find: new RegExp(`^@tracehub/${a}$`), replacement: `${root}apps/${a}/src/index.ts` })),
];

/**
 * Files that measure time against a limit (a page opening in under 1 s, links spread again
 * within 10 s): they run after the rest, one at a time, so that what they measure is tracehub
 * and not the other test files sharing the two cores.
 */
const TIMED_ALONE = [
  'tests/browser/big-timeline.test.ts',
  'tests/pipeline/workers.test.ts',
  'tests/setup/config-mistakes.test.ts',
];

export default defineConfig({
  resolve: { alias },
  test: {
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: files run in forks, a few at a time; each file isolates itself on NATS and Postgres.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'tracehub',
          include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
          exclude: ['**/node_modules/**', '**/dist/**', ...TIMED_ALONE],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'timed alone', include: TIMED_ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
