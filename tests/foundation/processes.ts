import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connectBus, removeTopology } from '@tracehub/bus';
import { repoRoot } from '@tracehub/tests/support';
import { expect } from 'vitest';

export const SERVICE_APPS = ['gateway', 'decoder-qs', 'decoder-stp', 'storage', 'api'] as const;

/** Where a test's services (and `tracehub`) find NATS, their database and the test's bus prefix. */
export interface PipelineEnv {
  natsUrl: string;
  databaseUrl: string;
  prefix: string;
}

/** A read+control token the api of every test stack accepts (the api refuses to start without one). */
export const TEST_API_TOKEN = 'test-stack-token-4f9a2c7e1b';

/**
 * `env` as the environment variables the services and `tracehub` read it from, with what the
 * api needs to start beside other stacks on the machine: a token, and any free port.
 */
export function backendsEnv(env: PipelineEnv): Record<string, string> {
  return {
    NATS_URL: env.natsUrl,
    DATABASE_URL: env.databaseUrl,
    TRACEHUB_BUS_PREFIX: env.prefix,
    API_TOKENS: `${TEST_API_TOKEN}:read+control`,
    API_PORT: '0',
  };
}

/**
 * These tests run the built services, as `npm start` does: the build must exist and be newer
 * than what it is built from, or the tests would pass or fail on code that is not the code.
 */
export function assertBuilt(files: string[]): void {
  const missing = files.filter((f) => !existsSync(join(repoRoot, f)));
  if (missing.length > 0) {
    throw new Error(`missing ${missing.join(', ')}: build first (npm run build, or npx turbo run build)`);
  }
  const stale = staleSources(repoRoot);
  if (stale.length > 0) {
    const shown = stale.slice(0, 5).join(', ') + (stale.length > 5 ? ` and ${stale.length - 5} more` : '');
    throw new Error(`the build is older than ${shown}: build first (npm run build, or npx turbo run build)`);
  }
}

/**
 * The sources under `root` (apps/* and packages/* that tsc compiles from src/ to dist/) whose
 * compiled file in dist/ is missing or older than they are.
 */
export function staleSources(root: string): string[] {
  const stale: string[] = [];
  for (const group of ['apps', 'packages']) {
    if (!existsSync(join(root, group))) continue;
    for (const name of readdirSync(join(root, group))) {
      const dir = join(root, group, name);
      const tsconfig = join(dir, 'tsconfig.json');
      // The dashboard is bundled by vite, not compiled file by file.
      if (!existsSync(tsconfig) || !/"outDir":\s*"dist"/.test(readFileSync(tsconfig, 'utf8'))) continue;
      for (const file of readdirSync(join(dir, 'src'), { recursive: true }) as string[]) {
        if (!/\.tsx?$/.test(file) || file.endsWith('.d.ts')) continue;
        const out = join(dir, 'dist', file.replace(/\.tsx?$/, '.js'));
        if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(dir, 'src', file)).mtimeMs)
          stale.push(`${group}/${name}/src/${file}`);
      }
    }
  }
  return stale;
}

export interface RunningProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** Resolves with the exit code (128 + n when killed by a signal). */
  exited: Promise<number>;
  /** Resolves with the first stdout line matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
}

/** The node flags an app's package.json asks for (`tracehub.nodeFlags`), as `npm start` uses them. */
function nodeFlagsOf(script: string): string[] {
  const app = /(?:^|\/)apps\/([^/]+)\/dist\/main\.js$/.exec(script)?.[1];
  const manifest = app && join(repoRoot, 'apps', app, 'package.json');
  if (!manifest || !existsSync(manifest)) return [];
  return JSON.parse(readFileSync(manifest, 'utf8')).tracehub?.nodeFlags ?? [];
}

/** Starts a built app (`apps/<app>/dist/main.js`) as `npm start` would: with its node flags. */
export function startNode(script: string, env: NodeJS.ProcessEnv): RunningProcess {
  const child = spawn(process.execPath, [...nodeFlagsOf(script), script], {
    cwd: repoRoot,
    // glibc's malloc as npm start sets it (scripts/start-all.mjs says why).
    env: { PATH: process.env.PATH, MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout.push(line);
    for (const w of waiters.filter((w) => w.pattern.test(line))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const exited = new Promise<number>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + 15 : 1)));
  });
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForLine(pattern, timeoutMs) {
      const seen = stdout.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no line matching ${pattern} within ${timeoutMs} ms; output:\n${stdout.join('\n')}\n${stderr.join('\n')}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        exited.then(() => {
          clearTimeout(timer);
          reject(
            new Error(`exited before a line matching ${pattern}; output:\n${stdout.join('\n')}\n${stderr.join('\n')}`),
          );
        });
      });
    },
  };
}

/** Milliseconds until `promise` settles, or rejects after `limitMs`. */
export async function within<T>(promise: Promise<T>, limitMs: number, what: string): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${limitMs} ms`)), limitMs);
  });
  try {
    const value = await Promise.race([promise, limit]);
    return { value, ms: Date.now() - t0 };
  } finally {
    clearTimeout(timer);
  }
}

export async function httpStatus(port: number, path: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}${path}`)).status;
}

/**
 * Starts every service with `env` at once; as each logs its ready line (within 45 s) checks it
 * answers /readyz with 200 and runs `whenReady` on it, then `whileRunning` once all are up.
 * Every service still running is killed at the end.
 */
export async function everyServiceReady(
  env: NodeJS.ProcessEnv,
  whenReady: (app: string, service: RunningProcess, ready: { healthPort: number }) => Promise<void>,
  whileRunning: () => Promise<void> = async () => {},
): Promise<void> {
  const services = SERVICE_APPS.map((app) => ({ app, proc: startNode(`apps/${app}/dist/main.js`, env) }));
  try {
    await Promise.all(
      services.map(async ({ app, proc }) => {
        const ready = JSON.parse(await proc.waitForLine(/"msg":"ready/, 45_000));
        expect(await httpStatus(ready.healthPort, '/readyz'), app).toBe(200);
        await whenReady(app, proc, ready);
      }),
    );
    await whileRunning();
  } finally {
    for (const { proc } of services) proc.child.kill('SIGKILL');
  }
}

/** Removes the streams and KV buckets the services made under a test's bus prefix. */
export async function removeBusPrefix(natsUrl: string, prefix: string): Promise<void> {
  const bus = await connectBus({ url: natsUrl, name: 'test-cleanup', prefix });
  try {
    await removeTopology(bus);
  } finally {
    await bus.close();
  }
}
