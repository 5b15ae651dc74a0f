import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type FreshDatabase, freshDatabase, natsUrl, repoRoot, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, backendsEnv, removeBusPrefix, SERVICE_APPS } from '../foundation/processes.js';

// Stopping `npm start` as a process manager does: a signal to whichever process of the chain
// it knows (npm itself, or the supervisor), or the supervisor killed outright. Every service
// must be gone soon after, whatever got the signal.

let db: FreshDatabase;
const prefix = uniquePrefix('stopping');

beforeAll(async () => {
  assertBuilt(['scripts/start-all.mjs', ...SERVICE_APPS.map((app) => `apps/${app}/dist/main.js`)]);
  db = await freshDatabase('stopping');
});

afterAll(async () => {
  await db?.drop();
  await removeBusPrefix(natsUrl(), prefix);
});

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** `command args` with the test's backends; resolves once the dashboard line is out, with the pids it started. */
async function startStack(command: string, args: string[]) {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...backendsEnv({ natsUrl: natsUrl(), databaseUrl: db.url, prefix }),
      TRACEHUB_HEALTH_PORT_BASE: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
  await waitUntil(async () => lines.some((l) => /\| dashboard: http/.test(l)), 60_000, 'the dashboard line');
  const services = lines.flatMap((l) => {
    const m = /\| (\S+) running \(pid (\d+)\)/.exec(l);
    return m ? [Number(m[2])] : [];
  });
  expect(services).toHaveLength(4);
  return { child, lines, services };
}

describe('stopping npm start', () => {
  it('SIGTERM to npm stops every service, even when npm does not pass it on', async () => {
    const { child, services } = await startStack('npm', ['start']);
    try {
      const t0 = Date.now();
      child.kill('SIGTERM');
      await waitUntil(async () => services.every((pid) => !isRunning(pid)), 15_000, 'every service to stop');
      expect(Date.now() - t0).toBeLessThan(15_000);
    } finally {
      for (const pid of services) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('SIGKILL of the supervisor: each service stops by itself', async () => {
    const { child, services } = await startStack(process.execPath, ['scripts/start-all.mjs']);
    try {
      child.kill('SIGKILL');
      await waitUntil(async () => services.every((pid) => !isRunning(pid)), 15_000, 'every service to stop');
    } finally {
      for (const pid of services) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
