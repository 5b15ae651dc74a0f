/**
 * Throughput of the PalmTrace codec: `npm run bench -w packages/palmtrace` (after a build).
 * Encodes typical bridge traffic (one text line per message with pid, tid and time stamp),
 * then parses the whole stream in 64 KiB chunks, as a socket delivers it.
 */
import { encodeTraceMessage, type PalmTraceEvent, PalmTraceParser } from '../index.js';

const MESSAGES = 200_000;
const CHUNK = 64 * 1024;

function line(i: number): string {
  return `${(1_000_000 + i * 37).toString().padStart(10, '0')} Sch-Ent Obj=l_philo[${i % 5}],State=Philo_thinking → ${i}`;
}

function bench(name: string, bytes: () => number, count: number, run: () => void): void {
  run(); // warm-up
  const rounds = 3;
  // CPU time, not wall time: on a shared machine the wall clock measures the neighbours.
  const started = process.cpuUsage();
  for (let i = 0; i < rounds; i++) run();
  const used = process.cpuUsage(started);
  const seconds = (used.user + used.system) / 1e6 / rounds;
  const mbPerSecond = bytes() / 1e6 / seconds;
  const perSecond = count / seconds;
  console.log(
    `${name.padEnd(34)} ${mbPerSecond.toFixed(1).padStart(7)} MB/s ${Math.round(perSecond).toLocaleString('en-US').padStart(11)} messages/s`,
  );
}

const lines = Array.from({ length: MESSAGES }, (_, i) => line(i));
const encoded: Uint8Array[] = new Array(MESSAGES);
let total = 0;
bench(
  'encodeTraceMessage (Windows-1252)',
  () => total,
  MESSAGES,
  () => {
    total = 0;
    for (let i = 0; i < MESSAGES; i++) {
      encoded[i] = encodeTraceMessage({
        module: 0x8000,
        processId: 3,
        threadId: i % 8,
        timestampMs: i,
        text: lines[i],
      });
      total += encoded[i].length;
    }
  },
);
const stream = new Uint8Array(total);
for (let i = 0, at = 0; i < MESSAGES; at += encoded[i].length, i++) stream.set(encoded[i], at);
console.log(
  `stream: ${MESSAGES.toLocaleString('en-US')} messages, ${(total / 1e6).toFixed(1)} MB, mean ${(total / MESSAGES).toFixed(0)} bytes`,
);

let received = 0;
const count = (event: PalmTraceEvent) => {
  if (event.type === 'message') received++;
};
bench(
  'PalmTraceParser.push, 64 KiB chunks',
  () => total,
  MESSAGES,
  () => {
    const parser = new PalmTraceParser();
    for (let at = 0; at < stream.length; at += CHUNK) parser.push(stream.subarray(at, at + CHUNK), count);
  },
);
bench(
  'PalmTraceParser.push, 1 KiB chunks',
  () => total,
  MESSAGES,
  () => {
    const parser = new PalmTraceParser();
    for (let at = 0; at < stream.length; at += 1024) parser.push(stream.subarray(at, at + 1024), count);
  },
);
if (received !== MESSAGES * 8) throw new Error(`decoded ${received} messages, expected ${MESSAGES * 8}`);
