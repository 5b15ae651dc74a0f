import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixturePath, repoRoot } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { guessProtocol } from '../src/commands/decode-protocol-guess.js';

const run = promisify(execFile);
const CLI = join(repoRoot, 'apps/cli/dist/main.js');

/** A copy of a fixture under a name without extension: only its bytes can tell. */
function withoutExtension(file: string): string {
  const copy = join(mkdtempSync(join(tmpdir(), 'guess-')), 'capture');
  copyFileSync(file, copy);
  return copy;
}

describe('decode without -p', () => {
  it('takes the protocol from the extension, else from the first bytes', () => {
    expect(guessProtocol(fixturePath('qs', 'defer.qs'))).toEqual({ protocol: 'qs', from: 'its .qs extension' });
    expect(guessProtocol(withoutExtension(fixturePath('qs', 'dpp_qv.qs')))?.protocol).toBe('qs');
    expect(guessProtocol(withoutExtension(fixturePath('stp', 'coresight_juno.stp')))?.protocol).toBe('stp');
    expect(guessProtocol(withoutExtension(fixturePath('stp', 'v2_flags.stp')))?.protocol).toBe('stp');
    // STP v1 has no ASYNC to recognise, and a long STP message is no QS: -p is asked for.
    expect(guessProtocol(withoutExtension(fixturePath('stp', 'v1_ovrf.stp')))).toBeUndefined();
    expect(guessProtocol(withoutExtension(fixturePath('stp', 'v1_long_message.stp')))).toBeUndefined();
  });

  it('decodes as -p would, saying which protocol it chose and why', async () => {
    const file = withoutExtension(fixturePath('qs', 'defer.qs'));
    const guessed = await run(process.execPath, [CLI, 'decode', file], { cwd: repoRoot });
    const given = await run(process.execPath, [CLI, 'decode', '-p', 'qs', file], { cwd: repoRoot });
    expect(guessed.stdout).toBe(given.stdout);
    expect(guessed.stderr).toMatch(
      /^decoding .*capture as qs \(from its first bytes, QS frame flags; -p chooses another\)\n/,
    );
  });

  it('asks for -p when it cannot tell', async () => {
    const file = withoutExtension(fixturePath('stp', 'v1_ovrf.stp'));
    await expect(run(process.execPath, [CLI, 'decode', file], { cwd: repoRoot })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/cannot tell the protocol of .* give -p qs, -p stp or -p swd/),
    });
  });
});
