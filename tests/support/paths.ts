import { existsSync, readFileSync } from 'node:fs';
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

/**
 * What qspy printed for a QS fixture, as the codec must print it: lines 8 on of its
 * `.qspy.txt` (lines 1–7 are qspy's banner, options and file-open line), without the closing
 * empty line and `QSPY Done`.
 */
export function qspyLines(name: string): string[] {
  const lines = readFileSync(fixturePath('qs', `${name}.qspy.txt`), 'latin1').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines[lines.length - 1] !== 'QSPY Done' || lines[lines.length - 2] !== '') {
    throw new Error(`${name}.qspy.txt does not end with an empty line and QSPY Done`);
  }
  return lines.slice(7, -2);
}
