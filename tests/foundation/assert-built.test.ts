// The pipeline and foundation tests run the built services: a build older than its sources
// must stop them, not let them pass or fail on code that is not the code.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@tracehub/tests/support';
import { afterAll, describe, expect, it } from 'vitest';
import { staleSources } from './processes.js';

const root = mkdtempSync(join(tmpdir(), 'th-built-'));

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes `path` under the temporary root, modified at `at` (seconds since the epoch). */
function write(path: string, at: number): void {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, '');
  utimesSync(full, at, at);
}

describe('staleSources', () => {
  it('names every source whose compiled file is older or missing, and none of a bundled app', () => {
    write('packages/codec/tsconfig.json', 100);
    writeFileSync(join(root, 'packages/codec/tsconfig.json'), '{ "compilerOptions": { "outDir": "dist" } }');
    write('packages/codec/src/fresh.ts', 100);
    write('packages/codec/dist/fresh.js', 200);
    write('packages/codec/src/inner/changed.ts', 300);
    write('packages/codec/dist/inner/changed.js', 200);
    write('packages/codec/src/added.ts', 100);
    write('packages/codec/src/types.d.ts', 300);
    write('apps/dashboard/tsconfig.json', 100);
    write('apps/dashboard/src/main.ts', 300);
    expect(staleSources(root).sort()).toEqual(['packages/codec/src/added.ts', 'packages/codec/src/inner/changed.ts']);
  });

  it('finds nothing stale in a fresh build of the repository', () => {
    // The test run starts from `npm run build`, as the pipeline tests require.
    expect(staleSources(repoRoot)).toEqual([]);
  });
});
