/**
 * Throughput of the STP codec and of `tracehub decode` on the 33.5 MB STM stream of the fixtures
 * README (the real CoreSight capture `coresight_juno.stp` repeated 77 136 times), and of the codec
 * on synthetic STP v2 and v1 streams. When OpenCSD's `trc_pkt_lister` is on PATH, it lists the
 * same stream in the same run, in alternation with ours, and ratios are printed from those
 * figures; without it only our figures are printed. Every rate is per CPU second (user + system).
 *
 *   npm run bench -w packages/stp            (STP_BENCH_REPEATS=3 by default)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DecodedRecord } from '@tracehub/contracts';
import { OutputBuffer } from '@tracehub/contracts/output-buffer';
import { StpPacketParser } from '../packet-parser.js';
import { Pkt } from '../packets.js';
import { type ReassemblySink, StpReassembler } from '../reassembler.js';
import { StpDecoder } from '../stp-decoder.js';
import { StpStreamWriter } from '../stream-writer.js';

/** The fixtures README's stream: coresight_juno.stp (435 bytes) x 77 136 = 33 554 160 bytes. */
const JUNO_COPIES = 77_136;
const CHUNK = 64 * 1024;
const REPEATS = Math.max(1, Number(process.env.STP_BENCH_REPEATS ?? 3));

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../../..');
const shared = process.env.TRACEHUB_SHARED ?? resolve(repo, '..', 'shared');
const tracehub = join(repo, 'node_modules', '.bin', 'tracehub');

function tile(unit: Uint8Array, copies: number): Uint8Array {
  const out = new Uint8Array(copies * unit.length);
  for (let i = 0; i < copies; i++) out.set(unit, i * unit.length);
  return out;
}

/** A synthetic v2 pattern: several masters and channels interleaved, every data size, timestamps. */
function syntheticV2(): Uint8Array {
  const w = new StpStreamWriter().async().version(3);
  for (let i = 0; i < 2000; i++) {
    w.m8(0x40 + (i % 4)).c8(i % 16);
    w.data(4, 0x01020304 + i)
      .data(4, 0xdeadbeef)
      .data(8, 0x1122334455667788n);
    w.data(2, i & 0xffff).data(1, i & 0xff, 'MTS', `4${(i & 0xffff).toString(16).padStart(4, '0')}`);
    if (i % 8 === 0) w.data(4, i, 'M');
  }
  // Keep the tile a whole number of bytes so that tiling does not shift nibbles.
  if (w.length % 2 === 1) w.nibble(0);
  return w.bytes();
}

function syntheticV1(): Uint8Array {
  const w = new StpStreamWriter();
  for (let i = 0; i < 2000; i++) {
    w.packet(Pkt.MASTER, 0x10 + (i % 4))
      .packet(Pkt.V1_C8, i % 16)
      .v1Data(4, 0x01020304 + i)
      .v1Data(8, 0x1122334455667788n)
      .v1Data(2, i & 0xffff, i & 0xff);
  }
  if (w.length % 2 === 1) w.nibble(0);
  return w.bytes();
}

class CountingSink implements ReassemblySink {
  messages = 0;
  other = 0;
  message(): void {
    this.messages++;
  }
  exception(): void {
    this.other++;
  }
  marker(): void {
    this.other++;
  }
  discardedMessage(): void {
    this.other++;
  }
  discardedNibbles(): void {}
  deviceTimestamp(): void {}
  timestampFormat(): void {}
  frequency(): void {}
}

/** One timed run: CPU seconds, packets and messages counted, peak RSS in MB (children only). */
interface Run {
  cpu: number;
  packets: number;
  messages: number;
  rssMb: number;
}

function cpuClock(): () => number {
  const start = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1e6;
  };
}

/** Parser and reassembler only: the packet-level work of a packet lister with printing off. */
function parseOnly(stream: Uint8Array, version: 1 | 2): Run {
  const sink = new CountingSink();
  const parser = new StpPacketParser(new StpReassembler(version, 'ost', new Uint8Array(0), sink), { version });
  const elapsed = cpuClock();
  for (let i = 0; i < stream.length; i += CHUNK) parser.push(stream, i, Math.min(stream.length, i + CHUNK));
  return { cpu: elapsed(), packets: parser.packets, messages: sink.messages, rssMb: 0 };
}

/** The decoder writing the OST events as JSON lines (what `--format events` prints) into a buffer it reuses. */
function eventLines(stream: Uint8Array): Run {
  const lines: OutputBuffer = new OutputBuffer((block) => lines.recycle(block));
  const decoder = new StpDecoder({ records: false, eventLines: lines });
  const none = (_r: DecodedRecord) => {};
  const elapsed = cpuClock();
  for (let i = 0; i < stream.length; i += CHUNK) decoder.push(stream.subarray(i, i + CHUNK), { hostNs: 0n }, none);
  decoder.end({ hostNs: 0n }, none);
  lines.flush();
  const s = decoder.stats();
  return { cpu: elapsed(), packets: s.packets, messages: s.messages, rssMb: 0 };
}

/** The whole decoder: every message becomes a record with its OST bytes, fields and text. */
function records(stream: Uint8Array, version: 1 | 2): Run {
  const decoder = new StpDecoder({ version });
  const emit = (_r: DecodedRecord) => {};
  const elapsed = cpuClock();
  for (let i = 0; i < stream.length; i += CHUNK) {
    decoder.push(stream.subarray(i, i + CHUNK), { hostNs: BigInt(i) * 1000n }, emit);
  }
  decoder.end({ hostNs: BigInt(stream.length) * 1000n }, emit);
  const s = decoder.stats();
  return { cpu: elapsed(), packets: s.packets, messages: s.messages, rssMb: 0 };
}

/**
 * A command timed by /usr/bin/time (the child's CPU time and peak RSS), stdout to /dev/null, or
 * kept when `expectOut` says what it must contain (a short output that proves the work was done).
 */
function command(argv: string[], expectOut?: string, cwd?: string): Run {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', ...argv], {
    cwd,
    stdio: ['ignore', expectOut === undefined ? 'ignore' : 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  const [user, system, rssKb] = last.split(' ').map(Number);
  // trc_pkt_lister -profile ends with a segmentation fault after its work; its output says it was done.
  const done = expectOut === undefined ? r.status === 0 : (r.stdout ?? '').includes(expectOut);
  if (!done || !Number.isFinite(user)) {
    throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr.slice(-500)}${(r.stdout ?? '').slice(-500)}`);
  }
  return { cpu: user + system, packets: 0, messages: 0, rssMb: rssKb / 1024 };
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  return null;
}

/** A minimal OpenCSD snapshot around a raw STM stream: one STM source, unformatted data. */
function openCsdSnapshot(dir: string, streamFile: string): void {
  // The buffer file is named relative to the snapshot folder.
  writeFileSync(
    join(dir, 'snapshot.ini'),
    '[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=device_0.ini\n\n[trace]\nmetadata=trace.ini\n',
  );
  writeFileSync(
    join(dir, 'trace.ini'),
    `[trace_buffers]\nbuffers=buffer1\n\n[buffer1]\nname=STM_RAW\nfile=${basename(streamFile)}\nformat=source_data\n\n` +
      '[source_buffers]\nSTM_0=STM_RAW\n\n[core_trace_sources]\n',
  );
  writeFileSync(
    join(dir, 'device_0.ini'),
    '[device]\nname=STM_0\nclass=trace_source\ntype=STM\n\n[regs]\nSTMTCSR(0x3A0)=0x00200007\n',
  );
}

/** One thing timed on the STM stream, compared with the OpenCSD measurement named by `versus`. */
interface Measurement {
  name: string;
  run: () => Run;
  versus?: string;
  /** OpenCSD's: measured only when trc_pkt_lister is on PATH. */
  theirs?: boolean;
}

interface Series {
  name: string;
  bytes: number;
  /** Packets / messages per run (known from the in-process parse of the same stream). */
  packets: number;
  messages: number;
  runs: Run[];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function rate(s: Series): number {
  return s.bytes / 1e6 / median(s.runs.map((r) => r.cpu));
}

function line(s: Series): string {
  const cpus = s.runs.map((r) => r.cpu);
  const mbs = rate(s);
  const spread = cpus.length > 1 ? ` (CPU ${Math.min(...cpus).toFixed(2)}-${Math.max(...cpus).toFixed(2)} s)` : '';
  const rss = Math.max(...s.runs.map((r) => r.rssMb));
  const perSecond = (n: number) => (n / median(cpus) / 1e6).toFixed(2).padStart(6);
  return (
    `${s.name.padEnd(52)} ${mbs.toFixed(1).padStart(6)} MB/s ${perSecond(s.packets)} M packets/s ` +
    `${perSecond(s.messages)} M messages/s  median ${median(cpus).toFixed(2)} s${spread}` +
    (rss > 0 ? `  peak RSS ${rss.toFixed(0)} MB` : '')
  );
}

function ratio(ours: Series, theirs: Series | undefined): string {
  return theirs === undefined ? '' : `  = ${(rate(ours) / rate(theirs)).toFixed(2)}x ${theirs.name}`;
}

function main(): void {
  const juno = tile(new Uint8Array(readFileSync(join(shared, 'fixtures', 'stp', 'coresight_juno.stp'))), JUNO_COPIES);
  const work = mkdtempSync(join(tmpdir(), 'stp-bench-'));
  try {
    const streamFile = join(work, 'stm.bin');
    writeFileSync(streamFile, juno);
    const lister = onPath('trc_pkt_lister');
    if (lister !== null) openCsdSnapshot(work, streamFile);
    const counted = parseOnly(juno, 2);
    const ocsd = (extra: string[], expectOut?: string) =>
      command([lister!, '-ss_dir', work, '-no_time_print', ...extra], expectOut, work);
    const processed = `processed ${juno.length} bytes`;
    const decode = (format: string) => () =>
      command([process.execPath, tracehub, 'decode', '-p', 'stp', '-f', format, streamFile]);
    const PROFILE = 'OpenCSD trc_pkt_lister -profile (print off)';
    const LISTING = 'OpenCSD trc_pkt_lister listing';
    // In this order, once per repeat: ours and theirs alternate.
    const measurements: Measurement[] = [
      { name: 'ours: parse + reassemble, in process', run: () => parseOnly(juno, 2), versus: PROFILE },
      { name: PROFILE, run: () => ocsd(['-profile'], processed), theirs: true },
      { name: 'ours: tracehub decode --format packets', run: decode('packets'), versus: LISTING },
      // Its log to /dev/null and nowhere else (-logstdout also keeps writing trc_pkt_lister.ppl).
      { name: LISTING, run: () => ocsd(['-logfilename', '/dev/null']), theirs: true },
      { name: 'ours: tracehub decode --format events', run: decode('events') },
      { name: 'ours: event lines, in process', run: () => eventLines(juno) },
      { name: 'ours: records (OST), in process', run: () => records(juno, 2) },
    ].filter((m) => lister !== null || !m.theirs);
    const series = new Map<string, Series>(
      measurements.map((m) => [
        m.name,
        { name: m.name, bytes: juno.length, packets: counted.packets, messages: counted.messages, runs: [] },
      ]),
    );
    console.log(
      `STM stream: coresight_juno.stp x ${JUNO_COPIES} = ${juno.length} bytes, ${counted.packets} packets, ` +
        `${counted.messages} messages; ${REPEATS} runs each, in alternation; CPU time (user + system)`,
    );
    if (lister === null) console.log('trc_pkt_lister is not on PATH: our figures only, no ratio');
    for (let i = 0; i < REPEATS; i++) for (const m of measurements) series.get(m.name)?.runs.push(m.run());
    for (const m of measurements) {
      const ours = series.get(m.name) as Series;
      console.log(line(ours) + ratio(ours, m.versus === undefined ? undefined : series.get(m.versus)));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const v2 = tile(syntheticV2(), Math.ceil(juno.length / syntheticV2().length));
  const v1 = tile(syntheticV1(), Math.ceil(juno.length / syntheticV1().length));
  for (const [name, stream, version] of [
    ['synthetic STP v2 (4 masters, 16 channels)', v2, 2],
    ['synthetic STP v1 (4 masters, 16 channels)', v1, 1],
  ] as const) {
    const runs = { parse: [] as Run[], recs: [] as Run[] };
    for (let i = 0; i < REPEATS; i++) {
      runs.parse.push(parseOnly(stream, version));
      runs.recs.push(records(stream, version));
    }
    const base = { bytes: stream.length, packets: runs.parse[0].packets, messages: runs.parse[0].messages };
    console.log(line({ name: `${name}: parse + reassemble`, ...base, runs: runs.parse }));
    console.log(line({ name: `${name}: records (OST)`, ...base, runs: runs.recs }));
  }
  console.log(
    `peak RSS of this process ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (streams held in memory)`,
  );
}

main();
