import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { redactUrl } from '@tracehub/contracts';
import { repoRoot } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = join(repoRoot, 'apps/cli/dist/main.js');

describe('credentials in an --api URL', () => {
  it('never reach stderr when the API cannot be reached', async () => {
    const failed = await run(
      process.execPath,
      [CLI, 'records', '--session', 's1', '--api', 'http://reader:hunter22@127.0.0.1:9/', '--token', 't'],
      { cwd: repoRoot },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('cannot reach the API at http://reader:***@127.0.0.1:9/');
    expect(failed.stderr).not.toContain('hunter22');
  });

  it('are masked in a password given as a query parameter too', () => {
    expect(redactUrl('postgres://db.example/tracehub?sslmode=require&password=hunter22')).toBe(
      'postgres://db.example/tracehub?sslmode=require&password=***',
    );
  });
});
