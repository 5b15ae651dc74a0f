/**
 * How records should be encoded inside a stored block: measured on the big QS capture
 * (`shared/bench/qs/big_stress.qs.gz`), decoded as the pipeline decodes it (16 KiB chunks).
 *
 *   node --import tsx bench/block-encoding.bench.ts      (from tests/; BENCH_RECORDS, default 400 000)
 *
 * For blocks of BLOCK records it prints, per record: stored bytes, CPU to encode + compress
 * (writer side) and to decompress + decode back to records (reader side), for
 *  A. rendered records: each record's JSON without what the block's summary already says
 *     (rig, link, session, protocol), one per line, zstd;
 *  B. columns: the same values as columns (numbers as deltas, names and addresses through a
 *     per-block dictionary, fields JSON, text, raw bytes), zstd;
 *  C. link bytes only: the compressed raw chunks plus the decoder's snapshot at the block's
 *     start; records rendered on read by decoding again.
 * The link bytes themselves (kept in every case) are reported apart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { compressBlock, decompressBlock, WRITE_CODEC } from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const shared = process.env.TRACEHUB_SHARED ?? join(repo, '..', 'shared');
const LIMIT = Number(process.env.BENCH_RECORDS ?? 400_000);
const BLOCK = Number(process.env.BENCH_BLOCK_RECORDS ?? 2000);
// What stored blocks use: zstd level 3 (deflate on a Node without zstd).
const zstd = (b: Uint8Array) => compressBlock(b);
const unzstd = (b: Uint8Array) => decompressBlock(WRITE_CODEC, b);

const capture = gunzipSync(readFileSync(join(shared, 'bench/qs/big_stress.qs.gz')));
const decoder = new QsDecoder();
const records: TraceRecord[] = [];
/** Per block: the chunks it was decoded from and the decoder snapshot before its first chunk. */
const blocksC: Array<{ chunks: Buffer[]; snapshot: string; records: number }> = [];
let current = { chunks: [] as Buffer[], snapshot: JSON.stringify(decoder.snapshot()), records: 0 };
const hostNs = 1_795_000_000_000_000_000n;
let linkBytes = 0;
for (let at = 0, chunk = 0; at < capture.length && records.length < LIMIT; at += 16384, chunk++) {
  const piece = capture.subarray(at, at + 16384);
  linkBytes += piece.length;
  const place = {
    rig: 'rig1',
    link: 'uart0',
    session: 's1',
    chunk,
    protocol: 'qs' as const,
    hostNs: hostNs + BigInt(chunk) * 1000n,
    seq: 0,
  };
  const before = records.length;
  decoder.push(piece, { hostNs: place.hostNs, lostBytes: 0 }, (r) => {
    place.seq = records.length;
    records.push(toTraceRecord(r, place));
  });
  current.chunks.push(piece);
  current.records += records.length - before;
  if (current.records >= BLOCK) {
    blocksC.push(current);
    current = { chunks: [], snapshot: JSON.stringify(decoder.snapshot()), records: 0 };
  }
}
const n = records.length;
console.log(
  `${n} records from ${(linkBytes / 1e6).toFixed(1)} MB of link bytes (${(linkBytes / n).toFixed(1)} B/record); blocks of ${BLOCK}`,
);

function cpu<T>(work: () => T): { value: T; us: number } {
  const t0 = process.cpuUsage();
  const value = work();
  const t = process.cpuUsage(t0);
  return { value, us: t.user + t.system };
}

// A. rendered records, JSON lines.
function encodeA(block: TraceRecord[]): Buffer {
  const lines = block.map(({ rig: _r, link: _l, session: _s, protocol: _p, ...rest }) => JSON.stringify(rest));
  return zstd(Buffer.from(lines.join('\n')));
}
function decodeA(data: Buffer): unknown[] {
  return unzstd(data)
    .toString()
    .split('\n')
    .map((l) => JSON.parse(l));
}

// B. columns.
function encodeB(block: TraceRecord[]): Buffer {
  const dict = new Map<string, number>();
  const id = (s: string | undefined) => {
    if (s === undefined) return 0;
    let v = dict.get(s);
    if (v === undefined) dict.set(s, (v = dict.size + 1));
    return v;
  };
  const nums: number[] = [];
  const texts: string[] = [];
  const fields: string[] = [];
  const raws: Buffer[] = [];
  let prevChunk = block[0].chunk;
  let prevTs = 0n;
  for (const r of block) {
    const ts = r.targetTs === null ? prevTs : BigInt(r.targetTs);
    nums.push(
      r.chunk - prevChunk,
      Number(ts - prevTs),
      id(r.kind),
      r.type,
      id(r.name),
      id(r.qs?.obj),
      id(r.qs?.sig),
      r.qs?.prio ?? -1,
    );
    prevChunk = r.chunk;
    prevTs = ts;
    texts.push(r.text);
    fields.push(JSON.stringify(r.fields));
    raws.push(Buffer.from(r.raw, 'base64'));
  }
  const columns = [
    Buffer.from(JSON.stringify([...dict.keys()])),
    Buffer.from(new Int32Array(nums).buffer),
    Buffer.from(texts.join('\0')),
    Buffer.from(fields.join('\0')),
    Buffer.concat(raws),
  ];
  const header = Buffer.from(new Uint32Array(columns.map((c) => c.length)).buffer);
  return zstd(Buffer.concat([header, ...columns]));
}
function decodeB(data: Buffer): number {
  // The reader's work: decompress, then split the columns back into values.
  const all = unzstd(data);
  const lengths = [0, 1, 2, 3, 4].map((k) => all.readUInt32LE(k * 4));
  let at = 20;
  const column = (k: number) => all.subarray(at, (at += lengths[k]));
  const dict = JSON.parse(column(0).toString()) as string[];
  const numbers = new Int32Array(new Uint8Array(column(1)).buffer);
  const texts = column(2).toString().split('\0');
  const fields = column(3)
    .toString()
    .split('\0')
    .map((f) => JSON.parse(f));
  return dict.length + numbers.length + texts.length + fields.length;
}

const blocks: TraceRecord[][] = [];
for (let i = 0; i < n; i += BLOCK) blocks.push(records.slice(i, i + BLOCK));

function report(label: string, bytes: number, encUs: number, decUs: number) {
  console.log(
    `${label.padEnd(34)} ${(bytes / n).toFixed(1).padStart(6)} B/record   write ${(encUs / n).toFixed(2)} µs/record   read ${(decUs / n).toFixed(2)} µs/record`,
  );
}

const a = cpu(() => blocks.map(encodeA));
const aRead = cpu(() => a.value.map(decodeA));
report(
  'A. rendered JSON lines, zstd',
  a.value.reduce((s, b) => s + b.length, 0),
  a.us,
  aRead.us,
);

const b = cpu(() => blocks.map(encodeB));
const bRead = cpu(() => b.value.map((d) => decodeB(d)));
report(
  'B. columns, zstd',
  b.value.reduce((s, x) => s + x.length, 0),
  b.us,
  bRead.us,
);

const c = cpu(() =>
  blocksC.map((blk) => ({ link: zstd(Buffer.concat(blk.chunks)), state: zstd(Buffer.from(blk.snapshot)) })),
);
const cRead = cpu(() => {
  let made = 0;
  for (const [i, blk] of c.value.entries()) {
    const d = QsDecoder.restore(JSON.parse(unzstd(blk.state).toString()), {});
    const bytes = unzstd(blk.link);
    d.push(bytes, { hostNs: 0n, lostBytes: 0 }, () => made++);
    void i;
  }
  return made;
});
const cRecords = blocksC.reduce((s, x) => s + x.records, 0);
const cState = c.value.reduce((s, x) => s + x.state.length, 0);
console.log(
  `${'C. decoder snapshot per block'.padEnd(34)} ${(cState / cRecords).toFixed(1).padStart(6)} B/record   write ${(c.us / cRecords).toFixed(2)} µs/record (link bytes' zstd included)   read ${(cRead.us / cRecords).toFixed(2)} µs/record (decoding again)`,
);
const linkZ = c.value.reduce((s, x) => s + x.link.length, 0);
console.log(
  `${'link bytes, zstd (kept in all cases)'.padEnd(34)} ${(linkZ / cRecords).toFixed(1).padStart(6)} B/record`,
);
