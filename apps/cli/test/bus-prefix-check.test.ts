import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectBus, ensureTopology, removeTopology } from '@tracehub/bus';
import { fixturePath, natsUrl, repoRoot, uniquePrefix } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = join(repoRoot, 'apps/cli/dist/main.js');

/** `tracehub args`: its exit code and stderr. */
async function tracehub(args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, [CLI, ...args], { cwd: repoRoot });
    return { code: 0, stderr };
  } catch (error) {
    const e = error as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe('replay and tail on a bus prefix nothing reads', () => {
  it('refuse a prefix no service ever ran on, and make nothing there', async () => {
    const prefix = uniquePrefix('nobody');
    const replay = await tracehub([
      'replay',
      ...['--rig', 'r1', '--link', 'l1', '-p', 'qs', '--nats-url', natsUrl(), '--bus-prefix', prefix],
      fixturePath('qs', 'dpp_qv.qs'),
    ]);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toMatch(
      new RegExp(`no tracehub service has run on bus prefix '${prefix}'.*--bus-prefix.*--force replays anyway`),
    );
    const bus = await connectBus({ url: natsUrl(), name: 'check', prefix });
    try {
      await expect(bus.jsm.streams.info(bus.names.rawStream)).rejects.toThrow(/stream not found/);
    } finally {
      await bus.close();
    }
  });

  it('refuse a prefix whose streams exist but no decoder or storage reads now', async () => {
    const prefix = uniquePrefix('idle');
    const bus = await connectBus({ url: natsUrl(), name: 'check', prefix });
    try {
      await ensureTopology(bus);
      const tail = await tracehub(['tail', '--nats-url', natsUrl(), '--bus-prefix', prefix]);
      expect(tail.code).toBe(1);
      expect(tail.stderr).toMatch(
        new RegExp(`no decoder or storage is reading bus prefix '${prefix}' now: start them.*--force tails anyway`),
      );
    } finally {
      await removeTopology(bus);
      await bus.close();
    }
  });
});
