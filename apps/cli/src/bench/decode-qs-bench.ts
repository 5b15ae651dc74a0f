/**
 * `tracehub decode --protocol qs` as a whole command on the big stress capture
 * (shared/bench/qs/big_stress.qs.gz, unpacked once into the temp folder), output to /dev/null,
 * next to qspy 7.4 on the same file when `qspy` is on PATH: the two run in alternation, five
 * times each, and each run's CPU time (user + system), wall time and peak RSS come from
 * `/usr/bin/time`. The ratio is of medians taken in this run, never of a stored figure.
 * Run with `npm run bench -w apps/cli` (after a build).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

function onPath(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

const file = capture();
const bytes = statSync(file).size;
const records = 1_200_051; // qspy's output lines for this capture (fixtures README)
const withQspy = onPath('qspy');
const runs: Record<string, Run[]> = { tracehub: [], qspy: [] };
for (let i = 0; i < ROUNDS; i++) {
  runs.tracehub.push(timed(process.execPath, [cli, 'decode', '--protocol', 'qs', file]));
  if (withQspy) runs.qspy.push(timed('qspy', ['-k', '-u0', '-r', 'c0', '-f', file]));
}
console.log(`big_stress.qs, ${(bytes / 1e6).toFixed(1)} MB, ${ROUNDS} runs each in alternation, output to /dev/null`);
for (const [tool, list] of Object.entries(runs)) {
  if (list.length === 0) {
    console.log(`${tool.padEnd(9)} not on PATH: no figures (and no ratio)`);
    continue;
  }
  const cpu = median(list.map((r) => r.cpuS));
  const wall = median(list.map((r) => r.wallS));
  console.log(
    `${tool.padEnd(9)} CPU ${cpu.toFixed(2)} s (${range(list.map((r) => r.cpuS))}), wall ${wall.toFixed(2)} s ` +
      `(${range(list.map((r) => r.wallS))}): ${(bytes / 1e6 / cpu).toFixed(1)} MB/s CPU, ` +
      `${(records / 1e6 / cpu).toFixed(2)} M records/s CPU, peak RSS ${median(list.map((r) => r.rssMB)).toFixed(1)} MB`,
  );
}
if (withQspy) {
  const t = median(runs.tracehub.map((r) => r.cpuS));
  const q = median(runs.qspy.map((r) => r.cpuS));
  const tw = median(runs.tracehub.map((r) => r.wallS));
  const qw = median(runs.qspy.map((r) => r.wallS));
  console.log(
    `tracehub / qspy: ${(q / t).toFixed(2)}× qspy's speed by CPU time, ${(qw / tw).toFixed(2)}× by wall time`,
  );
}
