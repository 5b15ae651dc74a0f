/**
 * Throughput of the QS codec on two streams of at least 50 MB each: the big stress capture
 * (shared/bench/qs/big_stress.qs.gz, the file qspy's own rate was measured on) repeated, and
 * the captures of shared/fixtures/qs (real application traces, damaged ones included) one
 * after the other, repeated. For each, deframing alone, then full decoding with the qspy text
 * of every record, then the text alone written as bytes (`textTo`, what `tracehub decode`
 * does) into a block that a no-op writer empties. Run with `npm run bench -w packages/qs`
 * (after a build).
 *
 * Prints wall-clock and CPU-time rates (the CPU figure is what the code costs when the machine
 * is shared) and the peak resident memory while decoding, which stays flat in the input size.
 * Round 1 warms the JIT up; the summary gives the medians of the warm rounds, as one round
 * on a shared machine can be off by a lot.
 */
import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder } from '../decoder.js';
import { QsDeframer } from '../deframer.js';
import { TextBlocks } from '../text-blocks.js';
import { bigStress, fixtureCaptures, RecordTally } from './bench-streams.js';

const MIN_STREAM = 50e6;
const CHUNK = 64 * 1024;
const ROUNDS = 5;

interface Result {
  label: string;
  bytes: number;
  records: number;
  wallS: number;
  cpuS: number;
  peakRssMB: number;
}

function run(label: string, capture: Uint8Array, repeats: number, push: (chunk: Uint8Array) => number): Result {
  const rssBefore = process.memoryUsage.rss();
  let peak = rssBefore;
  let records = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let rep = 0; rep < repeats; rep++) {
    for (let off = 0; off < capture.length; off += CHUNK) {
      records += push(capture.subarray(off, off + CHUNK));
      if ((off & 0xfffff) === 0) peak = Math.max(peak, process.memoryUsage.rss());
    }
  }
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  peak = Math.max(peak, process.memoryUsage.rss());
  return {
    label,
    bytes: capture.length * repeats,
    records,
    wallS,
    cpuS: (cpu.user + cpu.system) / 1e6,
    peakRssMB: peak / 1e6,
  };
}

function print(r: Result): Result {
  const mb = r.bytes / 1e6;
  process.stdout.write(
    `${r.label.padEnd(22)} ${mb.toFixed(1)} MB in ${r.wallS.toFixed(2)} s wall / ${r.cpuS.toFixed(2)} s CPU: ` +
      `${(mb / r.wallS).toFixed(1)} MB/s wall, ${(mb / r.cpuS).toFixed(1)} MB/s CPU, ` +
      `${(r.records / r.wallS / 1e6).toFixed(2)} M records/s wall, ${(r.records / r.cpuS / 1e6).toFixed(2)} M records/s CPU, ` +
      `peak RSS ${r.peakRssMB.toFixed(1)} MB\n`,
  );
  return r;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Medians of the rates of the warm rounds (each rate on its own), and the highest peak RSS. */
function summary(label: string, rs: Result[]): void {
  const mb = rs[0].bytes / 1e6;
  const n = rs[0].records;
  process.stdout.write(
    `${label.padEnd(22)} ${median(rs.map((r) => mb / r.wallS)).toFixed(1)} MB/s wall, ` +
      `${median(rs.map((r) => mb / r.cpuS)).toFixed(1)} MB/s CPU, ` +
      `${median(rs.map((r) => n / r.wallS / 1e6)).toFixed(2)} M records/s wall, ` +
      `${median(rs.map((r) => n / r.cpuS / 1e6)).toFixed(2)} M records/s CPU, ` +
      `peak RSS ${Math.max(...rs.map((r) => r.peakRssMB)).toFixed(1)} MB\n`,
  );
}

/** Five rounds of deframing and decoding `capture` repeated to MIN_STREAM bytes; prints each and the medians. */
function benchStream(name: string, capture: Uint8Array): void {
  const repeats = Math.ceil(MIN_STREAM / capture.length);
  const baseRss = process.memoryUsage.rss() / 1e6;
  process.stdout.write(
    `\ninput: ${name} (${(capture.length / 1e6).toFixed(3)} MB) x ${repeats} = ${((capture.length * repeats) / 1e6).toFixed(1)} MB ` +
      `in ${CHUNK / 1024} KiB chunks; RSS with the input loaded: ${baseRss.toFixed(1)} MB; node ${process.version}\n`,
  );
  const ctx = { hostNs: 0n };
  const warmDeframe: Result[] = [];
  const warmDecode: Result[] = [];
  const warmBytes: Result[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    let frames = 0;
    const deframer = new QsDeframer({
      frame: () => {
        frames++;
      },
      frameError: () => {},
    });
    const deframed = print(
      run(`deframe only (${round})`, capture, repeats, (chunk) => {
        const before = frames;
        deframer.push(chunk);
        return frames - before;
      }),
    );

    const decoder = new QsDecoder();
    const tally = new RecordTally();
    const decoded = print(
      run(`decode + text (${round})`, capture, repeats, (chunk) => {
        const before = tally.records;
        decoder.push(chunk, ctx, tally.emit);
        return tally.records - before;
      }),
    );

    let textBytes = 0;
    const blocks = new TextBlocks('latin1', (bytes) => {
      textBytes += bytes.length;
    });
    const textDecoder = new QsDecoder();
    textDecoder.textTo(blocks);
    let textRecords = 0;
    const emit = (r: DecodedRecord) => {
      textRecords++;
      if (r.text !== '') blocks.line(r.text);
    };
    const asBytes = print(
      run(`text as bytes (${round})`, capture, repeats, (chunk) => {
        const before = textRecords;
        textDecoder.push(chunk, ctx, emit);
        return textRecords - before;
      }),
    );
    blocks.take();
    if (round > 1) {
      warmDeframe.push(deframed);
      warmDecode.push(decoded);
      warmBytes.push(asBytes);
    }
    if (round === ROUNDS) {
      const s = decoder.stats();
      process.stdout.write(
        `decoder: ${s.frames} frames, ${s.records} records, ${s.errors} errors, ${s.gaps} gaps, ${(tally.textChars / 1e6).toFixed(1)} M text characters; ` +
          `as bytes: ${(textBytes / 1e6).toFixed(1)} MB\n`,
      );
    }
  }
  process.stdout.write(`${name}, medians of rounds 2..${ROUNDS}:\n`);
  summary('deframe only', warmDeframe);
  summary('decode + text', warmDecode);
  summary('text as bytes', warmBytes);
}

benchStream('big_stress.qs', bigStress());
benchStream("the fixtures' captures", fixtureCaptures());
