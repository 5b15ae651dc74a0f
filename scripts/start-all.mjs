#!/usr/bin/env node
/**
 * `npm start`: every tracehub service on this machine, without Docker.
 *
 * Runs the migrations, then each app from its built `dist/main.js` against NATS_URL and
 * DATABASE_URL (creating the database when it does not exist yet), each with its own
 * HEALTH_PORT, its output prefixed with its name. SIGTERM/SIGINT are passed on to every app;
 * the script exits when all have stopped. If one app stops on its own, the others are stopped.
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
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Everything the script was given passes on to the services, with these defaults.
const hostEnv = process.env;
const env = {
  ...hostEnv,
  NATS_URL: hostEnv.NATS_URL || 'nats://127.0.0.1:4222',
  DATABASE_URL: hostEnv.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/tracehub',
};

const apps = ['storage', 'decoder-qs', 'decoder-stp', 'api'];
if (env.TRACEHUB_LINKS) apps.unshift('gateway');
const migrateCli = 'packages/db/dist/migrate-cli.js';
const entry = (app) => `apps/${app}/dist/main.js`;
/**
 * Node flags an app asks for in its package.json (`tracehub.nodeFlags`): the decoders make
 * short-lived garbage at every record, and a larger young generation (`--max-semi-space-size`)
 * cuts their garbage-collection time by about a fifth; storage handles megabyte buffers, whose
 * collection with parallel helper threads costs it a quarter more CPU on a small machine.
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

/** Creates the database of DATABASE_URL when the server does not have it yet. */
async function ensureDatabase(url) {
  const { default: pg } = await import('pg');
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) return;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`create database "${name.replaceAll('"', '""')}"`);
      say(`created database ${name}`);
    }
  } finally {
    await client.end().catch(() => {});
  }
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

function prefixOutput(name, stream, out) {
  const label = `${name.padEnd(nameWidth)} | `;
  createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
    out.write(label + line + '\n');
  });
}

function run(name, args, childEnv) {
  // Own process group: a Ctrl-C in the terminal reaches this script only, which passes one SIGTERM on.
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  prefixOutput(name, child.stdout, process.stdout);
  prefixOutput(name, child.stderr, process.stderr);
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
    child.on('error', () => resolve(1));
  });
  return { name, child, exited };
}

async function main() {
  const missing = missingBuild();
  if (missing.length > 0) {
    process.stderr.write(`tracehub is not built (missing ${missing.join(', ')}): run \`npm run build\` first\n`);
    return 1;
  }
  try {
    await ensureDatabase(env.DATABASE_URL);
  } catch (error) {
    process.stderr.write(`cannot prepare the database of DATABASE_URL: ${error.message || error.code || error}\n`);
    return 1;
  }
  const migrate = run('migrate', [migrateCli, 'up'], env);
  const migrated = await migrate.exited;
  if (migrated !== 0) {
    process.stderr.write(`migrations failed (exit ${migrated}); not starting the services\n`);
    return 1;
  }

  const base = Number(env.TRACEHUB_HEALTH_PORT_BASE ?? 9401);
  if (!Number.isInteger(base) || base < 0 || base > 65535 - apps.length) {
    process.stderr.write(`TRACEHUB_HEALTH_PORT_BASE must be a port number (or 0 for any free ports)\n`);
    return 2;
  }
  const ports = [];
  for (let i = 0; i < apps.length; i++) ports.push(base === 0 ? await freePort() : base + i);

  say('health ports:');
  for (const [i, app] of apps.entries()) {
    say(`  ${app.padEnd(nameWidth)}  ${ports[i]}  http://127.0.0.1:${ports[i]}/readyz`);
  }

  const children = apps.map((app, i) =>
    run(app, [...nodeFlags(app), entry(app)], { ...env, HEALTH_PORT: String(ports[i]) }),
  );
  let stopping = false;
  const stopAll = (signal) => {
    if (stopping) return;
    stopping = true;
    for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  // The services run in their own process groups (see run()), so this script must pass every
  // stop request on; a SIGKILL of this script alone would leave them running.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => {
      say(`${signal}: stopping every service`);
      stopAll('SIGTERM');
    });
  }
  const codes = await Promise.all(
    children.map(async ({ name, exited }) => {
      const code = await exited;
      if (!stopping) {
        say(`${name} stopped on its own (exit ${code}); stopping the others`);
        stopAll('SIGTERM');
        return code === 0 ? 1 : code;
      }
      return code;
    }),
  );
  const worst = Math.max(...codes);
  say(
    worst === 0 ? 'every service stopped' : `stopped (exit codes ${apps.map((a, i) => `${a}=${codes[i]}`).join(' ')})`,
  );
  return worst;
}

process.exitCode = await main();
