import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The `shared/` folder beside the repository (fixtures, specs, bench captures).
 * TRACEHUB_SHARED overrides it.
 */
export const sharedDir: string = process.env.TRACEHUB_SHARED ?? resolve(repo, '..', 'shared');
export const fixturesDir: string = join(sharedDir, 'fixtures');

export function fixturePath(...parts: string[]): string {
  const path = join(fixturesDir, ...parts);
  if (!existsSync(path)) throw new Error(`fixture ${path} not found: is ../shared beside the repository?`);
  return path;
}
