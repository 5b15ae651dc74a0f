/**
 * What `npm start` checks before it starts anything, each mistake as one line naming the
 * setting and what to do: the Node version, NATS (with JetStream) at NATS_URL, Postgres at
 * DATABASE_URL (its database created when missing), and every service's own configuration
 * (each service run with TRACEHUB_CHECK_CONFIG_ONLY=1, which checks and exits).
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

export const MIN_NODE_MAJOR = 22;

/** The sentence for a Node older than MIN_NODE_MAJOR, or undefined. */
export function oldNodeProblem(version = process.versions.node) {
  const major = Number.parseInt(version, 10);
  return major >= MIN_NODE_MAJOR ? undefined : `tracehub needs Node ${MIN_NODE_MAJOR} or newer (this is ${major}.x)`;
}

/** A URL as fit for a line on the terminal: its password replaced by ***. */
export function redactPassword(url) {
  return url.replace(/(:\/\/[^/@\s:]*:)[^/@\s]*@/g, '$1***@');
}

const HOW_TO_START_NATS =
  'start it with JetStream (nats-server -js, or docker compose up -d nats), or set NATS_URL to where it runs';
const HOW_TO_START_POSTGRES =
  'start Postgres (pg_ctlcluster <version> main start, or docker compose up -d postgres), or set DATABASE_URL to where it runs';

/**
 * NATS_URL reachable, and its server running JetStream: a NATS server greets every client with
 * an INFO line (in clear text, before any TLS), which says whether JetStream is on.
 * Resolves with the problem as one line, or undefined.
 */
export function natsProblem(natsUrl, timeoutMs = 3000) {
  const first = natsUrl.split(',')[0].trim();
  const shown = `NATS_URL=${redactPassword(natsUrl)}`;
  let url;
  try {
    url = new URL(first);
  } catch {}
  if (!url || !/^(nats|tls|ws|wss):$/.test(url.protocol) || !url.hostname)
    return Promise.resolve(`${shown} is not a NATS URL such as nats://127.0.0.1:4222`);
  const port = Number(url.port || 4222);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let settled = false;
    const done = (problem) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(
      () =>
        done(`${shown}: no NATS server answered at ${host}:${port} within ${timeoutMs / 1000} s; ${HOW_TO_START_NATS}`),
      timeoutMs,
    );
    const lines = createInterface({ input: socket });
    // readline passes the socket's error on: heard once, here.
    lines.on('error', (error) =>
      done(`${shown}: no NATS server at ${host}:${port} (${error.code ?? error.message}); ${HOW_TO_START_NATS}`),
    );
    lines.once('line', (line) => {
      if (!line.startsWith('INFO ')) return done(`${shown}: what answers at ${host}:${port} is not a NATS server`);
      let info;
      try {
        info = JSON.parse(line.slice(5));
      } catch {
        return done(`${shown}: what answers at ${host}:${port} is not a NATS server`);
      }
      done(
        info.jetstream === true
          ? undefined
          : `${shown}: the NATS server at ${host}:${port} runs without JetStream; restart it with -js (or a jetstream {} block in its configuration)`,
      );
    });
  });
}

/**
 * DATABASE_URL reachable, its database created when the server does not have it yet.
 * Resolves with the problem as one line, or undefined; `onCreated` hears of a database made.
 */
export async function postgresProblem(databaseUrl, onCreated, timeoutMs = 3000) {
  const shown = `DATABASE_URL=${redactPassword(databaseUrl)}`;
  let target;
  try {
    target = new URL(databaseUrl);
  } catch {}
  if (!target || !/^postgres(ql)?:$/.test(target.protocol))
    return `${shown} is not a Postgres URL such as postgres://user@host:5432/tracehub`;
  const name = decodeURIComponent(target.pathname.slice(1));
  const { default: pg } = await import('pg');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
    if (!name) return undefined;
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`create database "${name.replaceAll('"', '""')}"`);
      onCreated(name);
    }
    return undefined;
  } catch (error) {
    const why = error.code ?? error.message ?? String(error);
    if (['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT'].includes(error.code) || /timeout/i.test(why))
      return `${shown}: no Postgres server at ${target.hostname}:${target.port || 5432} (${why}); ${HOW_TO_START_POSTGRES}`;
    return `${shown}: Postgres refused (${redactPassword(error.message ?? why)}); check the user, password and database in DATABASE_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Every service's configuration checked before any starts, all in one process
 * (scripts/check-config.mjs) as each will run (`entry`, `env`). Resolves with one line per
 * distinct problem (a setting all services share is reported once, naming them all).
 */
export async function serviceConfigProblems(services, root) {
  const lines = [];
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/check-config.mjs'], {
      cwd: root,
      env: { ...process.env, TRACEHUB_CHECK_APPS: JSON.stringify(services) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
    createInterface({ input: child.stderr }).on('line', (l) => lines.push(l));
    child.on('close', resolve);
  });
  let outcomes;
  try {
    outcomes = JSON.parse(lines.at(-1) ?? '');
  } catch {
    return [`checking the configuration failed (exit ${code}): ${lines.join(' ').slice(0, 500)}`];
  }
  const byMessage = new Map();
  for (const { service, code, message } of outcomes) {
    if (code === 0) continue;
    const said = message ?? `exited ${code} while checking its configuration`;
    byMessage.set(said, [...(byMessage.get(said) ?? []), service]);
  }
  return [...byMessage].map(([message, names]) => `${names.join(', ')}: ${message}`);
}

/** The message of a service's fatal log line (JSON), or the last plain line it wrote. */
export function fatalMessage(lines) {
  for (const line of [...lines].reverse()) {
    try {
      const parsed = JSON.parse(line);
      if (parsed.level === 'fatal' && typeof parsed.msg === 'string') return parsed.msg;
    } catch {
      if (line.trim() !== '') return line.trim();
    }
  }
  return undefined;
}
