import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));
const packages = [
  'contracts',
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
    find: /^@tracehub\/contracts\/(decoded-record|names|export-formats|record-names)$/,
    replacement: `${root}packages/contracts/src/$1.ts`,
  },
  ...packages.map((p) => ({ find: new RegExp(`^@tracehub/${p}$`), replacement: `${root}packages/${p}/src/index.ts` })),
  ...apps.map((a) => ({ find: new RegExp(`^@tracehub/${a}$`), replacement: `${root}apps/${a}/src/index.ts` })),
];

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: files run in forks, a few at a time; each file isolates itself on NATS and Postgres.
    pool: 'forks',
    maxWorkers: 2,
  },
});
