/**
 * What the benchmarks (and the soak) share: a run's database, bus prefix and services, each
 * started as `npm start` starts it; CPU and memory of processes read from /proc; free ports;
 * percentiles; where figures are written.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectBus, removeTopology } from '@tracehub/bus';
import pg from 'pg';
import { peakRssMb } from '../support/peak-rss.js';

export const repo = fileURLToPath(new URL('../../', import.meta.url));
export const shared = process.env.TRACEHUB_SHARED ?? join(repo, '..', 'shared');
export const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Services to run under the V8 profiler (comma-separated app names); profiles go to BENCH_CPU_PROF_DIR. */
const profiled = new Set((process.env.BENCH_CPU_PROF ?? '').split(',').filter(Boolean));
const profileDir = process.env.BENCH_CPU_PROF_DIR ?? join(repo, 'test-output', 'cpu-profiles');
/** Where each service's log goes, one file a service (unset: only its errors, on stderr). */
const logDir = process.env.BENCH_LOG_DIR;

export interface Service {
  name: string;
  child: ChildProcess;
  ready: Promise<void>;
}

export function start(app: string, env: Record<string, string>, name = app): Service {
  const script = join(repo, `apps/${app}/dist/main.js`);
  if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build first`);
  // Started as `npm start` starts it: with the node flags its package.json asks for.
  const flags: string[] =
    JSON.parse(readFileSync(join(repo, `apps/${app}/package.json`), 'utf8')).tracehub?.nodeFlags ?? [];
  const nodeArgs = [...flags, ...(profiled.has(app) ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: repo,
    // glibc's malloc as npm start sets it (scripts/start-all.mjs says why).
    env: {
      PATH: process.env.PATH,
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '131072',
      ...serviceSettings(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Each service's log kept whole on request (BENCH_LOG_DIR): warnings say why a run went as it did.
  const logFile = logDir ? createWriteStream(join(logDir, `${name}.log`)) : undefined;
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      logFile?.write(`${line}\n`);
      if (line.includes('"msg":"ready')) resolve();
      if (line.includes('"level":"fatal"') || line.includes('"level":"error"'))
        process.stderr.write(`${name}: ${line}\n`);
    });
    child.once('exit', (code) => reject(new Error(`${app} exited with ${code} before it was ready`)));
  });
  return { name, child, ready };
}

/**
 * The services' own settings set in the bench's environment (`GATEWAY_*`, `DECODER_*`,
 * `STORAGE_*`): a run tries a deployment's settings without editing the bench.
 */
function serviceSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => /^(GATEWAY|DECODER|STORAGE)_/.test(e[0]) && e[1] !== undefined,
    ),
  );
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds used so far by every local process of each server (Postgres backends and
 * helpers, nats-server), when they run on this machine; an exited backend's time is gone.
 */
export function serverCpuSeconds(): Record<string, number> {
  const out: Record<string, number> = { postgres: 0, 'nats-server': 0 };
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!(name in out)) continue;
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out[name] += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** Resident memory now (MB) of each service and of each local server (all its processes). */
export function residentMb(services: readonly Service[]): Record<string, number> {
  const rss = (pid: number) =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const now: Record<string, number> = {};
  for (const s of services) now[s.name] = rss(s.child.pid!);
  for (const [name, pids] of Object.entries(serverPids())) now[name] = pids.reduce((sum, pid) => sum + rss(pid), 0);
  return now;
}

/** The pids of the local servers' processes (Postgres backends and helpers, nats-server), by server. */
function serverPids(): Record<string, number[]> {
  const out: Record<string, number[]> = { postgres: [], 'nats-server': [] };
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name in out) out[name].push(Number(pid));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** Busy and total CPU time of the whole machine so far, seconds (from /proc/stat). */
export function machineCpuSeconds(): { busy: number; total: number } {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3] + ticks[4];
  return { busy: (total - idle) / 100, total: total / 100 };
}

/** CPU seconds used so far by each service, each local server (`serverCpuSeconds`) and the machine. */
interface CpuReading {
  services: Map<string, number>;
  servers: Record<string, number>;
  machine: { busy: number; total: number };
}

function readCpu(services: readonly Service[]): CpuReading {
  return {
    services: new Map(services.map((s) => [s.name, cpuSeconds(s.child.pid!)])),
    servers: serverCpuSeconds(),
    machine: machineCpuSeconds(),
  };
}

/** CPU seconds used: by each service, then each local server, by name; and by the machine, busy and in all. */
export interface CpuUsed {
  byProcess: Record<string, number>;
  machineBusy: number;
  machineTotal: number;
}

/** Starts counting the CPU the services, the local servers and the machine use; the function returns it so far. */
export function countCpu(services: readonly Service[]): () => CpuUsed {
  const from = readCpu(services);
  return () => {
    const to = readCpu(services);
    const byProcess: Record<string, number> = {};
    for (const [name, seconds] of to.services) byProcess[name] = seconds - from.services.get(name)!;
    for (const name of Object.keys(to.servers)) byProcess[name] = to.servers[name] - from.servers[name];
    return {
      byProcess,
      machineBusy: to.machine.busy - from.machine.busy,
      machineTotal: to.machine.total - from.machine.total,
    };
  };
}

/**
 * Prints each service's peak RSS, then writes `figures` with the peak RSS (MB by service) and the
 * machine's load average (1, 5 and 15 minutes) to `test-output/bench/<file>`, and says where.
 */
export function writeFigures(file: string, services: readonly Service[], figures: object): void {
  const peaks = Object.fromEntries(services.map((s) => [s.name, Math.round(peakRssMb(s.child.pid!))]));
  for (const [name, mb] of Object.entries(peaks)) process.stdout.write(`peak RSS ${name}: ${mb} MB\n`);
  const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  const outDir = join(repo, 'test-output', 'bench');
  mkdirSync(outDir, { recursive: true });
  const written = { ...figures, peak_rss_mb: peaks, machine_load_average: loadAverage };
  writeFileSync(join(outDir, file), `${JSON.stringify(written, null, 2)}\n`);
  process.stdout.write(`figures written to ${join(outDir, file)}\n`);
}

/**
 * A port nobody listens on now, below the kernel's ephemeral range (32768 and up): a port the
 * kernel handed out and took back may be handed to an outgoing connection (to NATS, to
 * Postgres) before the service that was given it listens.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Where one bench run keeps its data: a database and a bus prefix of its own. */
export interface BenchPlace {
  dbName: string;
  dbUrl: string;
  prefix: string;
  admin: pg.Client;
}

/**
 * The environment every service of a run starts with: the run's NATS, database and bus prefix,
 * health on any free port, logs at info (services log their ready line at info).
 */
export function serviceEnv(place: BenchPlace): Record<string, string> {
  return {
    NATS_URL: natsUrl,
    DATABASE_URL: place.dbUrl,
    TRACEHUB_BUS_PREFIX: place.prefix,
    HEALTH_PORT: '0',
    LOG_LEVEL: 'info',
  };
}

/** A fresh database (on DATABASE_URL's server) and bus prefix for one run, named `<label>_…`. */
export async function freshBenchPlace(label: string): Promise<BenchPlace> {
  const suffix = randomBytes(4).toString('hex');
  const dbName = `${label}_${suffix}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  return { dbName, dbUrl: url.toString(), prefix: `${label}${suffix}`, admin };
}

/** Stops the services (SIGTERM, and waits), then drops the run's database and its streams and buckets. */
export async function tearDown(place: BenchPlace, services: readonly Service[]): Promise<void> {
  for (const s of services) s.child.kill('SIGTERM');
  await Promise.all(
    services.map((s) => new Promise((r) => (s.child.exitCode !== null ? r(null) : s.child.once('exit', r)))),
  );
  await place.admin.query(`drop database if exists ${place.dbName} with (force)`);
  await place.admin.end();
  const bus = await connectBus({ url: natsUrl, name: 'bench-cleanup', prefix: place.prefix });
  await removeTopology(bus);
  await bus.close();
}

/** What a bench run's body works with: its place, its services (ready) and a client of its database. */
export interface BenchRun {
  place: BenchPlace;
  services: Service[];
  db: pg.Client;
}

/**
 * One bench run: a fresh database and bus prefix named after `label`, the services
 * `startServices` starts with the run's environment (`serviceEnv`), each waited for until ready,
 * and a client of the run's database for `body`; after it the client is closed, the services
 * stopped and the run's data dropped.
 */
export async function benchRun<T>(
  label: string,
  startServices: (env: Record<string, string>) => Promise<Service[]>,
  body: (run: BenchRun) => Promise<T>,
): Promise<T> {
  const place = await freshBenchPlace(label);
  const services = await startServices(serviceEnv(place));
  const db = new pg.Client({ connectionString: place.dbUrl });
  try {
    await Promise.all(services.map((s) => s.ready));
    await db.connect();
    return await body({ place, services, db });
  } finally {
    await db.end().catch(() => {});
    await tearDown(place, services);
  }
}
