/**
 * Throughput of the STP decoder on >= 50 MB streams built in memory: the real CoreSight STM
 * capture `coresight_juno.stp` tiled (the input OpenCSD's packet lister was timed on, see the
 * fixtures README), and synthetic STP v2 and v1 streams from `StpStreamWriter`.
 *
 *   npm run bench -w packages/stp
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DecodedRecord } from '@tracehub/contracts';
import { StpPacketParser } from '../packet-parser.js';
import { type ReassemblySink, StpReassembler } from '../reassembler.js';
import { StpDecoder } from '../stp-decoder.js';
import { StpStreamWriter } from '../stream-writer.js';

const TARGET_BYTES = 52 * 1024 * 1024;
const CHUNK = 64 * 1024;
/** OpenCSD trc_pkt_lister on the tiled Juno capture, 2-core VM (fixtures README). */
const OPENCSD_MB_S = 3.5;
const OPENCSD_PACKETS_S = 0.92e6;

const here = dirname(fileURLToPath(import.meta.url));
const shared = process.env.TRACEHUB_SHARED ?? resolve(here, '../../../../../shared');

function tile(unit: Uint8Array, target: number): Uint8Array {
  const copies = Math.ceil(target / unit.length);
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
    w.v1Master(0x10 + (i % 4)).v1Channel(i % 16);
    w.v1Data(4, 0x01020304 + i)
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

interface Result {
  /** CPU seconds of this process (user + system): fairer than wall time on a shared machine. */
  seconds: number;
  wall: number;
  packets: number;
  messages: number;
  records: number;
}

function startClock(): () => { seconds: number; wall: number } {
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  return () => {
    const used = process.cpuUsage(cpu);
    return { seconds: (used.user + used.system) / 1e6, wall: Number(process.hrtime.bigint() - t0) / 1e9 };
  };
}

/** Parser and reassembler only: the packet-level work, as a packet lister does it. */
function runParser(stream: Uint8Array, version: 1 | 2): Result {
  const sink = new CountingSink();
  const asm = new StpReassembler(version, 'ost', new Uint8Array(0), sink);
  const parser = new StpPacketParser(asm, { version });
  const clock = startClock();
  for (let i = 0; i < stream.length; i += CHUNK) parser.push(stream, i, Math.min(stream.length, i + CHUNK));
  return { ...clock(), packets: parser.packets, messages: sink.messages, records: 0 };
}

/** The whole decoder: every message becomes a record with its OST bytes, fields and text. */
function runDecoder(stream: Uint8Array, version: 1 | 2, output: 'ost' | 'phonet'): Result {
  const decoder = new StpDecoder({ version, output });
  let records = 0;
  const emit = (_r: DecodedRecord) => {
    records++;
  };
  const clock = startClock();
  for (let i = 0; i < stream.length; i += CHUNK) {
    decoder.push(stream.subarray(i, i + CHUNK), { hostNs: BigInt(i) * 1000n }, emit);
  }
  decoder.end({ hostNs: BigInt(stream.length) * 1000n }, emit);
  const s = decoder.stats();
  return { ...clock(), packets: s.packets, messages: s.messages, records };
}

function report(name: string, bytes: number, r: Result): void {
  const mbs = bytes / 1e6 / r.seconds;
  const line =
    `${name.padEnd(58)} ${(bytes / 1e6).toFixed(1).padStart(5)} MB ${r.seconds.toFixed(2).padStart(6)} s cpu ` +
    `(${(bytes / 1e6 / r.wall).toFixed(1).padStart(5)} MB/s wall) ` +
    `${mbs.toFixed(1).padStart(7)} MB/s  ${(r.packets / r.seconds / 1e6).toFixed(2).padStart(6)} M packets/s  ` +
    `${(r.messages / r.seconds / 1e6).toFixed(2).padStart(6)} M messages/s` +
    (name.includes('juno') ? `  (${(mbs / OPENCSD_MB_S).toFixed(1)}x OpenCSD)` : '');
  console.log(line);
}

function main(): void {
  const juno = new Uint8Array(readFileSync(join(shared, 'fixtures', 'stp', 'coresight_juno.stp')));
  const streams: [string, Uint8Array, 1 | 2][] = [
    ['coresight_juno.stp tiled (real STM, v2)', tile(juno, TARGET_BYTES), 2],
    ['synthetic STP v2 (4 masters, 16 channels)', tile(syntheticV2(), TARGET_BYTES), 2],
    ['synthetic STP v1 (4 masters, 16 channels)', tile(syntheticV1(), TARGET_BYTES), 1],
  ];
  console.log(
    `OpenCSD trc_pkt_lister on the tiled Juno capture: ${OPENCSD_MB_S} MB/s, ${OPENCSD_PACKETS_S / 1e6} M packets/s`,
  );
  console.log('MB/s, packets/s and messages/s below are per CPU second of this process (user + system)');
  for (const [name, stream, version] of streams) {
    runParser(stream.subarray(0, 4 << 20), version); // warm-up
    report(`${name}, parse+reassemble`, stream.length, runParser(stream, version));
    runDecoder(stream.subarray(0, 4 << 20), version, 'ost'); // warm-up
    report(`${name}, records (OST)`, stream.length, runDecoder(stream, version, 'ost'));
  }
  console.log(
    `peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (the three streams in memory: ${(
      streams.reduce((n, s) => n + s[1].length, 0) / 1e6
    ).toFixed(0)} MB)`,
  );
}

main();
