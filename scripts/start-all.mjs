#!/usr/bin/env node
/**
 * `npm start`: every tracehub service on this machine, without Docker.
 *
 * First checks, before starting anything (scripts/preflight.mjs): the Node version, NATS with
 * JetStream at NATS_URL, Postgres at DATABASE_URL (creating the database when it does not exist
 * yet) and every app's own configuration; a mistake is one line naming the setting, and exit 2.
 * Then runs the migrations, then each app from its built `dist/main.js`, each with its own
 * HEALTH_PORT, its output prefixed with its name, and prints the health ports and the dashboard
 * address as plain text. SIGTERM/SIGINT/SIGHUP are passed on to every app, and so is the death
 * of the process that started this script (npm, which may not pass a SIGTERM on); the script
 * exits when all have stopped. The apps stop by themselves when this script is gone (even
 * killed with SIGKILL). An app that stops on its own (a crash, a kill) is logged and started
 * again after a pause that grows while it keeps failing (0.5 s to 30 s); the others keep
 * running. Only a bad configuration (exit 2) stops everything, with the app's line.
 * Exit codes: 0 every app stopped cleanly when asked, 1 a failure, 2 bad configuration.
 *
 *   NATS_URL                    default nats://127.0.0.1:4222
 *   DATABASE_URL                default postgres://postgres@127.0.0.1:5432/tracehub
 *   TRACEHUB_HEALTH_PORT_BASE   first health port (default 9401; 0: any free ports)
 *   TRACEHUB_LINKS              links for the gateway; the gateway runs only when this is set
 *   TRACEHUB_BUS_PREFIX, LOG_LEVEL, ... are passed on to every app.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fatalMessage, natsProblem, oldNodeProblem, postgresProblem, serviceConfigProblems } from './preflight.mjs';

// Before anything else: on an older Node the apps fail later and obscurely.
const nodeProblem = oldNodeProblem();
if (nodeProblem) {
  process.stderr.write(`${nodeProblem}\n`);
  process.exit(2);
}

const root = fileURLToPath(new URL('..', import.meta.url));
// Everything the script was given passes on to the services, with these defaults.
const hostEnv = process.env;
const env = {
  // glibc's malloc, as the services use it: two arenas, and blocks of 128 KiB and more always
  // mapped apart and given back when freed. With its defaults a service's resident memory crept
  // up through a 30-minute soak while its JS heap stayed flat (the growth was in malloc's heap);
  // the soak run with these settings held flat (storage 217 -> 218 MB from minute 2 to 30).
  // Settings the host gives win.
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  ...hostEnv,
  NATS_URL: hostEnv.NATS_URL || 'nats://127.0.0.1:4222',
  DATABASE_URL: hostEnv.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/tracehub',
  // Each app stops when this script is gone, however it went.
  TRACEHUB_SUPERVISOR_PID: String(process.pid),
};

const apps = ['storage', 'decoder-qs', 'decoder-stp', 'api'];
if (env.TRACEHUB_LINKS) apps.unshift('gateway');
/** The script's exit codes, as every service's: 0 all stopped cleanly, 1 a failure, 2 bad configuration. */
const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_CONFIG = 2;
const migrateCli = 'packages/db/dist/migrate-cli.js';
const entry = (app) => `apps/${app}/dist/main.js`;
/**
 * Node flags an app asks for in its package.json (`tracehub.nodeFlags`): the decoders make
 * short-lived garbage at every record, and a larger young generation (`--max-semi-space-size`)
 * cuts their garbage-collection time by about a fifth; storage handles megabyte buffers, whose
 * collection with parallel helper threads costs it a quarter more CPU on a small machine. The
 * gateway keeps its young generation small: a thousand links connecting at once would grow it
 * to 64 MB and more, resident for good, while its per-chunk garbage needs little
 * (docs/scaling.md, "An idle link").
 */
const nodeFlags = (app) =>
  JSON.parse(readFileSync(`${root}/apps/${app}/package.json`, 'utf8')).tracehub?.nodeFlags ?? [];
const nameWidth = Math.max(...apps.map((a) => a.length), 'migrate'.length);

function say(line) {
  process.stdout.write(`${'start'.padEnd(nameWidth)} | ${line}\n`);
}

function missingBuild() {
  return [migrateCli, ...apps.map(entry)].filter((file) => !existsSync(`${root}${file}`));
}

/** A port nobody listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function prefixOutput(name, stream, out, lastLines) {
  const label = `${name.padEnd(nameWidth)} | `;
  createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
    out.write(label + line + '\n');
    lastLines.push(line);
    if (lastLines.length > 20) lastLines.shift();
    if (name === 'api') announceDashboard(line);
  });
}

/** The dashboard's address, in plain words, once the api says which port it listens on. */
function announceDashboard(line) {
  if (!line.includes('"msg":"api on ')) return;
  try {
    const { port } = JSON.parse(line);
    const scheme = env.API_TLS_CERT ? 'https' : 'http';
    say(`dashboard: ${scheme}://127.0.0.1:${port}/   (API ${scheme}://127.0.0.1:${port}/api/v1, docs /docs)`);
  } catch {
    // Not a log line of ours: nothing to announce.
  }
}

function run(name, args, childEnv) {
  // Own process group: a Ctrl-C in the terminal reaches this script only, which passes one SIGTERM on.
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lastLines = [];
  prefixOutput(name, child.stdout, process.stdout, lastLines);
  prefixOutput(name, child.stderr, process.stderr, lastLines);
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code: code ?? EXIT_FAILURE, signal }));
    child.on('error', () => resolve({ code: EXIT_FAILURE, signal: null }));
  });
  return { name, child, exited, lastLines };
}

async function main() {
  const missing = missingBuild();
  if (missing.length > 0) {
    process.stderr.write(`tracehub is not built (missing ${missing.join(', ')}): run \`npm run build\` first\n`);
    return 1;
  }
  const base = Number(env.TRACEHUB_HEALTH_PORT_BASE ?? 9401);
  if (!Number.isInteger(base) || base < 0 || base > 65535 - apps.length) {
    process.stderr.write(
      `TRACEHUB_HEALTH_PORT_BASE=${JSON.stringify(env.TRACEHUB_HEALTH_PORT_BASE)} is not a port from 0 to ${65535 - apps.length}; ` +
        `the apps get health ports from it on, e.g. TRACEHUB_HEALTH_PORT_BASE=9401 (0: any free ports)\n`,
    );
    return EXIT_CONFIG;
  }
  const ports = [];
  for (let i = 0; i < apps.length; i++) ports.push(base === 0 ? await freePort() : base + i);
  const appEnv = (i) => ({ ...env, HEALTH_PORT: String(ports[i]) });

  // Everything checked before anything starts: a mistake is a setting to fix. NATS and
  // Postgres first (a fraction of a second), then every app's own settings (an app each).
  const backends = (
    await Promise.all([
      natsProblem(env.NATS_URL),
      postgresProblem(env.DATABASE_URL, (name) => say(`created database ${name}`)),
    ])
  ).filter(Boolean);
  const problems =
    backends.length > 0
      ? backends
      : (
          await serviceConfigProblems(
            apps.map((app, i) => ({ name: app, entry: entry(app), env: appEnv(i) })),
            root,
          )
        ).map(withHealthPortHint);
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`${problem}\n`);
    say('not starting: fix the setting above');
    return EXIT_CONFIG;
  }

  const migrate = run('migrate', [migrateCli, 'up'], env);
  const migrated = await migrate.exited;
  if (migrated.code !== 0) {
    process.stderr.write(
      `migrations failed (${describeExit(migrated.code, migrated.signal)}); not starting the services\n`,
    );
    return EXIT_FAILURE;
  }

  say('health ports:');
  for (const [i, app] of apps.entries()) {
    say(`  ${app.padEnd(nameWidth)}  ${ports[i]}  http://127.0.0.1:${ports[i]}/readyz`);
  }

  const services = apps.map((app, i) => new SupervisedService(app, appEnv(i)));
  const stopAll = () => {
    for (const service of services) service.stop();
  };
  // The services run in their own process groups (see run()), so this script must pass every
  // stop request on; after a SIGKILL of this script they stop by themselves (TRACEHUB_SUPERVISOR_PID).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => {
      say(`${signal}: stopping every service`);
      stopAll();
    });
  }
  // npm (`npm start`) may die of a SIGTERM without passing it on: this script is then handed to
  // init (or a subreaper), and its parent pid changes.
  const parent = process.ppid;
  const parentWatch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(parentWatch);
    say('the process that started npm start is gone: stopping every service');
    stopAll();
  }, 500);
  // A service whose configuration is wrong cannot get better by restarting: stop everything.
  for (const service of services) {
    service.onFatal = (code, said) => {
      say(`${service.name} cannot run with this configuration (exit ${code}); stopping the others`);
      if (said) process.stderr.write(`${service.name}: ${withHealthPortHint(said)}\n`);
      stopAll();
    };
  }
  const outcomes = await Promise.all(services.map((s) => s.run()));
  clearInterval(parentWatch);
  const worst = Math.max(...outcomes);
  say(
    worst === EXIT_OK
      ? 'every service stopped'
      : `stopped (${services.map((s, i) => `${s.name}: ${describeExit(outcomes[i], s.lastSignal)}`).join(', ')})`,
  );
  return worst;
}

/**
 * One service under supervision: started again, after a growing pause, whenever it stops
 * without being asked to, so a crash of one service never takes the others down (the gateway
 * keeps its target connected while the decoders or storage come back). A service that exits
 * with the configuration code (2) is not restarted: it would fail the same way for ever.
 */
class SupervisedService {
  /** Called when the service exits with EXIT_CONFIG. */
  onFatal = () => {};
  lastSignal = null;
  restarts = 0;
  #stopping = false;
  #current;
  #wakeFromPause;

  constructor(name, childEnv) {
    this.name = name;
    this.childEnv = childEnv;
  }

  /** Runs the service until it is stopped; resolves with what its stop means (EXIT_*). */
  async run() {
    let quickCrashes = 0;
    for (;;) {
      const startedAt = Date.now();
      this.#current = run(this.name, [...nodeFlags(this.name), entry(this.name)], this.childEnv);
      say(`${this.name} running (pid ${this.#current.child.pid})`);
      const { code, signal } = await this.#current.exited;
      this.lastSignal = signal;
      if (this.#stopping) return code === 0 ? EXIT_OK : EXIT_FAILURE;
      if (code === EXIT_CONFIG) {
        this.onFatal(code, fatalMessage(this.#current.lastLines));
        return EXIT_CONFIG;
      }
      const ranMs = Date.now() - startedAt;
      quickCrashes = ranMs >= STABLE_RUN_MS ? 1 : quickCrashes + 1;
      const pauseMs = restartPauseMs(quickCrashes);
      this.restarts++;
      say(
        `${this.name} stopped on its own (${describeExit(code, signal)}) after ${(ranMs / 1000).toFixed(1)} s; ` +
          `restart ${this.restarts} in ${(pauseMs / 1000).toFixed(1)} s`,
      );
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, pauseMs);
        this.#wakeFromPause = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wakeFromPause = undefined;
      if (this.#stopping) return EXIT_OK;
    }
  }

  stop() {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#wakeFromPause?.();
    const child = this.#current?.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
}

/** A run this long counts as healthy: the next crash starts the pauses from the shortest again. */
const STABLE_RUN_MS = 60_000;
/** Pause before restart n of a run of quick crashes: 0.5 s, 1 s, 2 s, ... up to 30 s. */
function restartPauseMs(quickCrashes) {
  return Math.min(30_000, 500 * 2 ** (quickCrashes - 1));
}

/** HEALTH_PORT is npm start's doing: a problem with it is fixed through TRACEHUB_HEALTH_PORT_BASE. */
function withHealthPortHint(problem) {
  return problem.includes('HEALTH_PORT=')
    ? `${problem} (npm start gives the apps health ports from TRACEHUB_HEALTH_PORT_BASE=${env.TRACEHUB_HEALTH_PORT_BASE ?? 9401} on: choose another base, or 0 for any free ports)`
    : problem;
}

function describeExit(code, signal) {
  if (signal) return `killed by ${signal}`;
  if (code === EXIT_OK) return 'exit 0';
  if (code === EXIT_CONFIG) return 'exit 2, bad configuration';
  return `exit ${code}`;
}

process.exitCode = await main();
