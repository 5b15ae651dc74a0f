/**
 * `tracehub decode --protocol qs` as a whole command, on one thread and on one per core (up to
 * four), on the big stress capture (shared/bench/qs/big_stress.qs.gz, unpacked once into the
 * temp folder), output to /dev/null, next to qspy 7.4 on the same file when a qspy binary is
 * given (`QSPY=/path/to/qspy`, or `qspy` on PATH): the three run in alternation, five times each (`BENCH_ROUNDS`), and each run's
 * CPU time (user + system), wall time and peak RSS come from `/usr/bin/time`. Before timing,
 * one run of each checks that both print the same lines. The ratio is of medians taken in this
 * run, never of a stored figure; the load average before and after says how busy the machine was.
 * Run with `npm run bench -w apps/cli` (after a build).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const shared = process.env.TRACEHUB_SHARED ?? resolve(repo, '..', 'shared');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const cli = fileURLToPath(new URL('../main.js', import.meta.url));

interface Run {
  cpuS: number;
  wallS: number;
  rssMB: number;
}

function capture(): string {
  const dir = join(tmpdir(), 'tracehub-bench');
  const path = join(dir, 'big_stress.qs');
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, gunzipSync(readFileSync(join(shared, 'bench', 'qs', 'big_stress.qs.gz'))));
  }
  return path;
}

/** Runs a command under /usr/bin/time with stdout to /dev/null; its CPU, wall time and peak RSS. */
function timed(command: string, args: string[]): Run {
  const out = spawnSync('/usr/bin/time', ['-f', 'BENCH %U %S %e %M', command, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const line = out.stderr.split('\n').find((l) => l.startsWith('BENCH '));
  if (!line) throw new Error(`${command} failed: ${out.stderr.slice(-500)}`);
  const [user, sys, wall, rssKB] = line.slice(6).split(' ').map(Number);
  return { cpuS: user + sys, wallS: wall, rssMB: rssKB / 1024 };
}

/** The qspy to compare with: `QSPY`, else `qspy` on PATH, else none. */
function findQspy(): string | undefined {
  if (process.env.QSPY) return process.env.QSPY;
  return spawnSync('sh', ['-c', 'command -v qspy'], { stdio: 'ignore' }).status === 0 ? 'qspy' : undefined;
}

/** A command's standard output as bytes. */
function stdoutOf(command: string, args: string[]): Buffer {
  const out = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30 });
  return out.stdout;
}

/** qspy's lines from line 8 up to its closing empty line and `QSPY Done`, as tracehub prints them. */
function qspyRecordLines(text: Buffer): Buffer {
  let start = 0;
  for (let i = 0; i < 7; i++) start = text.indexOf(10, start) + 1;
  const done = text.lastIndexOf('\nQSPY Done');
  return text.subarray(start, done > 0 ? done : text.length);
}

const loads = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

const file = capture();
const bytes = statSync(file).size;
const qspy = findQspy();
// The default (one thread), and one thread per core.
const threads = Math.min(availableParallelism(), 4);
const tracehubArgs = {
  'tracehub, 1 thread': [cli, 'decode', '--protocol', 'qs', '--threads', '1', file],
  [`tracehub, ${threads} threads`]: [cli, 'decode', '--protocol', 'qs', '--threads', String(threads), file],
};
const qspyArgs = ['-k', '-u0', '-r', 'c0', '-f', file];
// Records a second are of the lines printed (one a record), counted from this run's output.
const printed = stdoutOf(process.execPath, Object.values(tracehubArgs)[0]);
let records = 0;
for (let at = printed.indexOf(10); at >= 0; at = printed.indexOf(10, at + 1)) records++;
if (qspy) {
  const expected = qspyRecordLines(stdoutOf(qspy, qspyArgs));
  for (const [tool, args] of Object.entries(tracehubArgs)) {
    const same = (tool === Object.keys(tracehubArgs)[0] ? printed : stdoutOf(process.execPath, args)).equals(expected);
    console.log(`output of ${tool}: ${same ? 'the same lines as qspy' : 'DIFFERS from qspy'}`);
    if (!same) process.exitCode = 1;
  }
}
const loadBefore = loads();
const runs: Record<string, Run[]> = { qspy: [] };
for (const tool of Object.keys(tracehubArgs)) runs[tool] = [];
for (let i = 0; i < ROUNDS; i++) {
  for (const [tool, args] of Object.entries(tracehubArgs)) runs[tool].push(timed(process.execPath, args));
  if (qspy) runs.qspy.push(timed(qspy, qspyArgs));
}
console.log(`big_stress.qs, ${(bytes / 1e6).toFixed(1)} MB, ${ROUNDS} runs each in alternation, output to /dev/null`);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loads()} after`);
const width = Math.max(...Object.keys(runs).map((t) => t.length)) + 1;
for (const [tool, list] of Object.entries(runs)) {
  if (list.length === 0) {
    console.log(`${tool.padEnd(width)} not given (QSPY=... or on PATH): no figures (and no ratio)`);
    continue;
  }
  const cpu = median(list.map((r) => r.cpuS));
  const wall = median(list.map((r) => r.wallS));
  console.log(
    `${tool.padEnd(width)} CPU ${cpu.toFixed(2)} s (${range(list.map((r) => r.cpuS))}), wall ${wall.toFixed(2)} s ` +
      `(${range(list.map((r) => r.wallS))}): ${(bytes / 1e6 / cpu).toFixed(1)} MB/s CPU, ` +
      `${(records / 1e6 / cpu).toFixed(2)} M records/s CPU, peak RSS ${median(list.map((r) => r.rssMB)).toFixed(1)} MB`,
  );
}
if (qspy) {
  const q = median(runs.qspy.map((r) => r.cpuS));
  const qw = median(runs.qspy.map((r) => r.wallS));
  for (const tool of Object.keys(tracehubArgs)) {
    const t = median(runs[tool].map((r) => r.cpuS));
    const tw = median(runs[tool].map((r) => r.wallS));
    console.log(
      `${tool} / qspy: ${(q / t).toFixed(2)}× qspy's speed by CPU time, ${(qw / tw).toFixed(2)}× by wall time`,
    );
  }
}
