/**
 * The views on big_stress (1.2 M records) that read block summaries instead of records, timed
 * through the api: the session's target segments, its timeline in target time (the whole
 * session, then a 1 ms window at its middle) and its state machines. The capture is stored as
 * a lab's records are (`tracehub replay` into a gateway link, a decoder-qs and a storage
 * process), with the fmt app's tick rate (100 ns) as the link setting.
 *
 *   npm run bench:target-views -w tests      (needs `npm run build`, DATABASE_URL and NATS_URL)
 *
 * Prints wall and CPU time (of this process, which runs the api in-process: Postgres's own
 * time shows in the wall time only) of each request, best of three (and the first's wall time:
 * the first view of a session after the api started), and writes
 * test-output/bench/target-views.json.
 */
import { buildApp } from '@tracehub/api';
import type { SessionTargetTime, TargetTimelineReply } from '@tracehub/api-contract';
import { READ_TOKEN, testApiSettings } from '../api/fixture-data.js';
import { storeBigStress } from '../support/big-stress-session.js';
import { testBackends } from '../support/test-backends.js';
import { writeFigures } from './bench-support.js';

const TICK_RATE = 10_000_000;
const backends = await testBackends('targetviewsbench', { topology: true });
const started = performance.now();
const big = await storeBigStress(backends, 'rigbig', 'uart0', ['--tick-rate', String(TICK_RATE)]);
const storeSeconds = (performance.now() - started) / 1000;
process.stdout.write(`big_stress: ${big.records} records stored in ${storeSeconds.toFixed(1)} s\n`);
const app = await buildApp({ db: backends.db, bus: backends.bus, settings: testApiSettings() });
await app.ready();

/** `GET path`, best of three: wall and CPU ms, the first one's wall ms, and the answer. */
async function timed<T>(path: string): Promise<{ body: T; wallMs: number; cpuMs: number; firstMs: number }> {
  let best: { body: T; wallMs: number; cpuMs: number } | undefined;
  let firstMs = 0;
  for (let i = 0; i < 3; i++) {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const res = await app.inject({ url: `/api/v1${path}`, headers: { authorization: `Bearer ${READ_TOKEN}` } });
    const wallMs = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
    const run = { body: res.json() as T, wallMs, cpuMs: (used.user + used.system) / 1000 };
    if (i === 0) firstMs = wallMs;
    if (!best || run.wallMs < best.wallMs) best = run;
  }
  return { ...best!, firstMs };
}

const figures: Record<string, unknown> = { records: big.records, store_seconds: storeSeconds };
try {
  const s = big.session;
  const report = (name: string, t: { wallMs: number; cpuMs: number; firstMs: number }, note = '') => {
    figures[name] = {
      wall_ms: Math.round(t.wallMs),
      cpu_ms: Math.round(t.cpuMs),
      first_wall_ms: Math.round(t.firstMs),
    };
    process.stdout.write(
      `${name}: ${t.wallMs.toFixed(0)} ms wall, ${t.cpuMs.toFixed(0)} ms CPU (first ${t.firstMs.toFixed(0)} ms wall)${note}\n`,
    );
  };
  const segments = await timed<SessionTargetTime>(`/sessions/${s}/target-time`);
  report('target_time', segments, ` (${segments.body.segments.length} segment(s), ${segments.body.untimed} untimed)`);
  const whole = await timed<TargetTimelineReply>(`/sessions/${s}/target-timeline?buckets=1000`);
  report(
    'timeline_whole',
    whole,
    ` (${whole.body.records} records in ${whole.body.lanes.length} lanes, ${whole.body.toSeconds! - whole.body.fromSeconds!} s)`,
  );
  // 1 ms in the middle of the segment.
  const mid = (BigInt(whole.body.fromTicks!) + BigInt(whole.body.toTicks!)) / 2n;
  const zoom = await timed<TargetTimelineReply>(
    `/sessions/${s}/target-timeline?from=${mid}&to=${mid + BigInt(TICK_RATE / 1000)}&buckets=1000`,
  );
  report('timeline_1ms', zoom, ` (${zoom.body.records} records, ${zoom.body.items?.length ?? 'no'} items)`);
  const machines = await timed<{ records: number; machines: Array<{ states: unknown[] }> }>(
    `/sessions/${s}/state-machines`,
  );
  report(
    'state_machines',
    machines,
    ` (${machines.body.machines.length} machines, ${machines.body.records} QEP records)`,
  );
  figures.load_note = 'see machine_load_average: the machine is shared';
} finally {
  writeFigures('target-views.json', [], figures);
  await app.close();
  await big.close();
  await backends.close();
}
