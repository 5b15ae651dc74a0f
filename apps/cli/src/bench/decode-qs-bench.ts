/**
 * `tracehub decode --protocol qs` as a whole command next to qspy 7.4 (`QSPY=/path/to/qspy`, or
 * `qspy` on PATH), output to /dev/null, on two captures unpacked once into the temp folder:
 * - big_stress.qs (shared/bench/qs/big_stress.qs.gz, 37 MB): a stress test, mostly user records;
 * - dpp_steady.qs: a real application's steady state (26 MB): the DPP example's dictionaries
 *   once, then its traffic over and over (dppSteadyState);
 * - dpp_mix.qs: the captures of shared/fixtures/qs end to end, repeated to 33 MB: the records
 *   of real QP applications (dispatches, posts, transitions, time events, dictionaries), with
 *   their gaps and bad frames;
 * - big_stress_x3.qs: big_stress three times over (111 MB), run pinned only: with big_stress it
 *   splits each tool's time into a fixed part (start-up, compiling) and a part per megabyte,
 *   and gives the size from which tracehub is the faster of the two;
 * - any captures of your own, `BENCH_QS_CAPTURES=a.qs,b.qs` (paths, comma-separated): run as
 *   big_stress is (qspy's default sizes, so captures of targets of 4-byte pointers, or that
 *   start with their target info).
 *
 * Every run of each capture alternates with the others, `BENCH_ROUNDS` times (five by default);
 * each run's CPU time (user + system), wall time and peak RSS come from `/usr/bin/time`. Runs:
 * tracehub on one thread and on one per core (up to four), and qspy, where the system puts them;
 * then, where `taskset` is on PATH, qspy and tracehub pinned to the same CPU, each CPU in turn.
 * The pinned runs are the fair CPU-time comparison: the two CPUs of a virtual machine can run at
 * very different speeds (on the machine of the README's figures, for a while one took 1.8 times
 * as long as the other for the same qspy run), and an unpinned run's CPU time then depends on
 * where it landed. Before timing, one run of each checks that both print the same lines. Ratios
 * are of medians taken in this run, never of a stored figure; the load average before and after
 * says how busy the machine was. Run with `npm run bench -w apps/cli` (after a build).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { encodeFrame, QS_STATE_RECORD_IDS, QsDeframer, QsRecordId } from '@tracehub/qs';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const shared = process.env.TRACEHUB_SHARED ?? resolve(repo, '..', 'shared');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
// The command as users run it: the launcher (its V8 flags) and the bundle it starts.
const cli = fileURLToPath(new URL('../../bin/tracehub.js', import.meta.url));

interface Run {
  cpuS: number;
  wallS: number;
  rssMB: number;
}

/** A capture in the temp folder, made by `make` the first time. */
function capture(name: string, make: () => Uint8Array): string {
  const dir = join(tmpdir(), 'tracehub-bench');
  const path = join(dir, name);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, make());
  }
  return path;
}

/** The captures of shared/fixtures/qs end to end, repeated to at least `bytes`. */
function fixtureMix(bytes: number): Uint8Array {
  const dir = join(shared, 'fixtures', 'qs');
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.qs'))
    .sort();
  const once = Buffer.concat(names.map((f) => readFileSync(join(dir, f))));
  return Buffer.concat(Array.from({ length: Math.ceil(bytes / once.length) }, () => once));
}

/** QP 7.4 records that carry no timestamp: state entry, exit and initial transition, unhandled, automatic disarm. */
const UNSTAMPED: ReadonlySet<number> = new Set([
  QsRecordId.QS_QEP_STATE_ENTRY,
  QsRecordId.QS_QEP_STATE_EXIT,
  QsRecordId.QS_QEP_STATE_INIT,
  QsRecordId.QS_QEP_UNHANDLED,
  QsRecordId.QS_QF_TIMEEVT_AUTO_DISARM,
]);

/**
 * A real application's steady state, made from shared/fixtures/qs/dpp_posix.qs (the QP/C DPP
 * example on POSIX): its target info and dictionaries once, then its PHILO/TABLE/time-event
 * traffic after them over and over to at least `bytes`, each frame framed again with the next
 * sequence number and each timestamp moved on by the traffic's span, so that the stream reads as
 * one long run (no gaps, timestamps that only grow, wrapping at 2^32 as a target's do).
 */
function dppSteadyState(bytes: number): Uint8Array {
  const frames: Uint8Array[] = [];
  new QsDeframer({
    frame: (buf, start, len) => frames.push(buf.slice(start, start + len)),
    frameError: () => {},
  }).push(readFileSync(join(shared, 'fixtures', 'qs', 'dpp_posix.qs')));
  const setup: ReadonlySet<number> = new Set(QS_STATE_RECORD_IDS);
  let setupEnd = 0;
  frames.forEach((f, i) => {
    if (setup.has(f[1])) setupEnd = i + 1;
  });
  // QF_RUN comes once, when the application starts.
  const traffic = frames.slice(setupEnd).filter((f) => f[1] !== QsRecordId.QS_QF_RUN);
  const stamped = traffic.filter((f) => !UNSTAMPED.has(f[1]));
  const timeOf = (f: Uint8Array) => f[2] | (f[3] << 8) | (f[4] << 16) | (f[5] * 2 ** 24);
  const span = Math.max(...stamped.map(timeOf)) - Math.min(...stamped.map(timeOf)) + 1000;
  const out: Uint8Array[] = [];
  let length = 0;
  let seq = 0;
  const add = (f: Uint8Array, shift: number) => {
    const payload = f.slice(2, f.length - 1);
    if (shift !== 0) new DataView(payload.buffer).setUint32(0, (timeOf(f) + shift) % 2 ** 32, true);
    seq = (seq + 1) & 0xff;
    const frame = encodeFrame(seq, f[1], payload);
    out.push(frame);
    length += frame.length;
  };
  for (const f of frames.slice(0, setupEnd)) add(f, 0);
  for (let round = 0; length < bytes; round++) {
    for (const f of traffic) add(f, UNSTAMPED.has(f[1]) ? 0 : round * span);
  }
  return Buffer.concat(out);
}

/** Runs a command under /usr/bin/time with stdout to /dev/null; its CPU, wall time and peak RSS. */
function timed([command, ...args]: string[]): Run {
  const out = spawnSync('/usr/bin/time', ['-f', 'BENCH %U %S %e %M', command, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const line = out.stderr.split('\n').find((l) => l.startsWith('BENCH '));
  if (!line) throw new Error(`${command} failed: ${out.stderr.slice(-500)}`);
  const [user, sys, wall, rssKB] = line.slice(6).split(' ').map(Number);
  return { cpuS: user + sys, wallS: wall, rssMB: rssKB / 1024 };
}

/** Whether `command` is on PATH. */
const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

/** The qspy to compare with: `QSPY`, else `qspy` on PATH, else none. */
function findQspy(): string | undefined {
  if (process.env.QSPY) return process.env.QSPY;
  return onPath('qspy') ? 'qspy' : undefined;
}

/** A command's standard output as bytes. */
function stdoutOf([command, ...args]: string[]): Buffer {
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

/**
 * The CPU-time ratio of qspy's run to tracehub's in each round (the two run one after the other),
 * its median and range. The vCPUs here change speed for minutes at a time: a ratio of medians
 * mixes rounds of both speeds, while each round's two runs share one.
 */
function perRound(ours: Run[], theirs: Run[]): string {
  const ratios = ours.map((run, i) => theirs[i].cpuS / run.cpuS);
  return `; round by round ${median(ratios).toFixed(2)}× (${range(ratios)})`;
}

/** `BENCH_QS_CAPTURES`'s files by their names; a file that is not there stops the bench, with its path. */
function ownCaptures(list: string | undefined): Record<string, string> {
  const files: Record<string, string> = {};
  for (const path of (list ?? '').split(',').filter((p) => p !== '')) {
    const file = resolve(path);
    if (!existsSync(file)) throw new Error(`BENCH_QS_CAPTURES: no file ${file}`);
    files[basename(file)] = file;
  }
  return files;
}

const captures = {
  'big_stress.qs': capture('big_stress.qs', () =>
    gunzipSync(readFileSync(join(shared, 'bench', 'qs', 'big_stress.qs.gz'))),
  ),
  'dpp_steady.qs': capture('dpp_steady.qs', () => dppSteadyState(26e6)),
  'dpp_mix.qs': capture('dpp_mix.qs', () => fixtureMix(32e6)),
  'big_stress_x3.qs': capture('big_stress_x3.qs', () => {
    const once = gunzipSync(readFileSync(join(shared, 'bench', 'qs', 'big_stress.qs.gz')));
    return Buffer.concat([once, once, once]);
  }),
  ...ownCaptures(process.env.BENCH_QS_CAPTURES),
};

/** Captures run pinned only (the fixed and per-megabyte costs need no more). */
const PINNED_ONLY = new Set(['big_stress_x3.qs']);
const qspy = findQspy();
// The default (one thread), and one thread per core.
const threads = Math.min(availableParallelism(), 4);
// Both pinned to the same CPU, each CPU in turn (two at most: the figures are per CPU).
const pinnedCpus = onPath('taskset') && availableParallelism() > 1 ? [0, 1] : [];

/** `tracehub decode` of `file` on `n` threads, as [command, ...args]. */
function tracehubCommand(file: string, n: number): string[] {
  return [cli, 'decode', '--protocol', 'qs', '--threads', String(n), file];
}
/** qspy reading `file`, as [command, ...args] (none without qspy). */
const qspyCommandOf = (file: string) => (qspy ? [qspy, '-k', '-u0', '-r', 'c0', '-f', file] : undefined);

/** The commands of one capture, by the name printed: each is [command, ...args]. */
function commandsOf(file: string, pinnedOnly: boolean): Record<string, string[]> {
  const tracehub = (n: number) => tracehubCommand(file, n);
  const qspyCommand = qspyCommandOf(file);
  const commands: Record<string, string[]> = {};
  if (!pinnedOnly) {
    commands['tracehub, 1 thread'] = tracehub(1);
    commands[`tracehub, ${threads} threads`] = tracehub(threads);
    if (qspyCommand) commands.qspy = qspyCommand;
  }
  for (const cpu of pinnedCpus) {
    commands[`tracehub, 1 thread, CPU ${cpu}`] = ['taskset', '-c', String(cpu), ...tracehub(1)];
    if (qspyCommand) commands[`qspy, CPU ${cpu}`] = ['taskset', '-c', String(cpu), ...qspyCommand];
  }
  return commands;
}

const loadBefore = loads();
const results: {
  capture: string;
  bytes: number;
  records: number;
  commands: Record<string, string[]>;
  runs: Record<string, Run[]>;
}[] = [];
for (const [name, file] of Object.entries(captures)) {
  const pinnedOnly = PINNED_ONLY.has(name);
  const commands = commandsOf(file, pinnedOnly);
  const tracehub = (n: number) => tracehubCommand(file, n);
  const qspyCommand = qspyCommandOf(file);
  // Records a second are of the lines printed (one a record), counted from this run's output.
  const printed = stdoutOf(tracehub(1));
  let records = 0;
  for (let at = printed.indexOf(10); at >= 0; at = printed.indexOf(10, at + 1)) records++;
  if (qspyCommand) {
    const expected = qspyRecordLines(stdoutOf(qspyCommand));
    for (const n of pinnedOnly ? [1] : [1, threads]) {
      const tool = n === 1 ? 'tracehub, 1 thread' : `tracehub, ${threads} threads`;
      const same = (n === 1 ? printed : stdoutOf(tracehub(n))).equals(expected);
      console.log(`${name}: output of ${tool}: ${same ? 'the same lines as qspy' : 'DIFFERS from qspy'}`);
      if (!same) process.exitCode = 1;
    }
  }
  const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(commands).map((tool) => [tool, []]));
  results.push({ capture: name, bytes: statSync(file).size, records, commands, runs });
}
// Every command of every capture in turn, round after round.
for (let i = 0; i < ROUNDS; i++) {
  for (const { commands, runs } of results) {
    for (const [tool, command] of Object.entries(commands)) runs[tool].push(timed(command));
  }
}

console.log(`${ROUNDS} runs of each in alternation, output to /dev/null`);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loads()} after`);
if (!qspy) console.log("qspy is not given (QSPY=... or on PATH): tracehub's figures only, no ratio");
if (pinnedCpus.length === 0) console.log('taskset is not on PATH (or one CPU): no pinned runs');
for (const { capture: name, bytes, records, runs } of results) {
  console.log(`\n${name}, ${(bytes / 1e6).toFixed(1)} MB, ${(records / 1e6).toFixed(2)} M records`);
  const width = Math.max(...Object.keys(runs).map((t) => t.length)) + 1;
  const cpuOf = (tool: string) => median(runs[tool].map((r) => r.cpuS));
  const wallOf = (tool: string) => median(runs[tool].map((r) => r.wallS));
  for (const [tool, list] of Object.entries(runs)) {
    const cpu = cpuOf(tool);
    console.log(
      `${tool.padEnd(width)} CPU ${cpu.toFixed(2)} s (${range(list.map((r) => r.cpuS))}), wall ${wallOf(tool).toFixed(2)} s ` +
        `(${range(list.map((r) => r.wallS))}): ${(bytes / 1e6 / cpu).toFixed(1)} MB/s CPU, ` +
        `${(records / 1e6 / cpu).toFixed(2)} M records/s CPU, peak RSS ${median(list.map((r) => r.rssMB)).toFixed(1)} MB`,
    );
  }
  if (!qspy) continue;
  for (const tool of runs.qspy ? ['tracehub, 1 thread', `tracehub, ${threads} threads`] : []) {
    console.log(
      `${tool} / qspy, where the system put them: ${(cpuOf('qspy') / cpuOf(tool)).toFixed(2)}× qspy's speed by CPU time, ` +
        `${(wallOf('qspy') / wallOf(tool)).toFixed(2)}× by wall time${perRound(runs[tool], runs.qspy)}`,
    );
  }
  for (const cpu of pinnedCpus) {
    const [t, q] = [`tracehub, 1 thread, CPU ${cpu}`, `qspy, CPU ${cpu}`];
    console.log(
      `tracehub / qspy, both on CPU ${cpu}: ${(cpuOf(q) / cpuOf(t)).toFixed(2)}× qspy's speed by CPU time, ` +
        `${(wallOf(q) / wallOf(t)).toFixed(2)}× by wall time${perRound(runs[t], runs[q])}`,
    );
  }
}

// Fixed and per-megabyte costs, from the pinned runs of big_stress once and three times over:
// time = fixed + size x rate for each tool, the two points of this run (medians) giving both.
const once = results.find((r) => r.capture === 'big_stress.qs');
const thrice = results.find((r) => r.capture === 'big_stress_x3.qs');
if (qspy && once && thrice && pinnedCpus.length > 0) {
  console.log('\nbig_stress once and three times over, pinned: fixed cost and cost per MB (CPU time)');
  const mb = [once.bytes / 1e6, thrice.bytes / 1e6];
  for (const cpu of pinnedCpus) {
    const line = (tool: string) => {
      const [t1, t3] = [once, thrice].map((r) => median(r.runs[`${tool}, CPU ${cpu}`].map((x) => x.cpuS)));
      const perMB = (t3 - t1) / (mb[1] - mb[0]);
      return { perMB, fixed: t1 - perMB * mb[0] };
    };
    const t = line('tracehub, 1 thread');
    const q = line('qspy');
    // The size where the two lines cross, when tracehub's is the flatter one.
    const even = t.perMB < q.perMB ? (t.fixed - q.fixed) / (q.perMB - t.perMB) : Number.NaN;
    console.log(
      `CPU ${cpu}: tracehub ${t.fixed.toFixed(2)} s + ${(t.perMB * 1e3).toFixed(1)} ms/MB, ` +
        `qspy ${q.fixed.toFixed(2)} s + ${(q.perMB * 1e3).toFixed(1)} ms/MB: per MB ${(q.perMB / t.perMB).toFixed(2)}× qspy's speed; ` +
        (Number.isNaN(even) ? 'no size where tracehub is faster' : `as fast as qspy from ${even.toFixed(0)} MB`),
    );
  }
}
