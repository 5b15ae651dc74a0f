import { type DecodedRecord, jsonSafe } from '@tracehub/contracts';
import { QsDecoder } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { captureBytes } from './helpers.js';

const ctx = { hostNs: 0n };

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function decode(bytes: Uint8Array, chunk = bytes.length): DecodedRecord[] {
  const out: DecodedRecord[] = [];
  const emit = (r: DecodedRecord) => out.push(r);
  const d = new QsDecoder();
  for (let off = 0; off < bytes.length; off += chunk) d.push(bytes.subarray(off, off + chunk), ctx, emit);
  d.end(ctx, emit);
  return out;
}

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What must not change in a record decoded before the mutation point (fields checked apart). */
const summary = (r: DecodedRecord) => `${r.kind}|${r.type}|${r.name}|${r.targetTs}|${r.text}`;

/** A frame of the unmutated window: where its bytes are (flag included) and what it decoded to. */
interface BaseFrame {
  start: number;
  flag: number;
  raw: Uint8Array;
  record: string;
  fields: string;
}

interface Window {
  bytes: Uint8Array;
  frames: BaseFrame[];
}

/** A window of a clean capture from just after one flag to a later flag, decoded once. */
function makeWindow(capture: Uint8Array, from: number, length: number): Window {
  const start = from === 0 ? 0 : capture.indexOf(0x7e, from) + 1;
  const end = capture.indexOf(0x7e, start + length);
  const bytes = capture.slice(start, end + 1);
  const records = decode(bytes).filter((r) => r.raw.length > 0 && r.name !== 'SEQ_GAP');
  const frames: BaseFrame[] = [];
  let s = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x7e) continue;
    frames.push({ start: s, flag: i, raw: new Uint8Array(0), record: '', fields: '' });
    s = i + 1;
  }
  // Clean captures: one record per frame, in order.
  expect(records).toHaveLength(frames.length);
  frames.forEach((f, i) => {
    f.raw = records[i].raw;
    f.record = summary(records[i]);
    f.fields = JSON.stringify(jsonSafe(records[i].fields));
  });
  return { bytes, frames };
}

describe('fuzz: the decoder survives any bytes', () => {
  it('never throws on 40 000 random byte strings, cut anywhere', () => {
    const rnd = lcg(12345);
    const buf = new Uint8Array(128);
    for (let n = 0; n < 40_000; n++) {
      const len = Math.floor(rnd() * buf.length);
      for (let i = 0; i < len; i++) {
        const x = rnd();
        // Flags, escapes and small ids often, so that frames (and dictionary records) form.
        buf[i] = x < 0.12 ? 0x7e : x < 0.2 ? 0x7d : x < 0.4 ? Math.floor(rnd() * 100) : Math.floor(rnd() * 256);
      }
      const records = decode(buf.subarray(0, len), 1 + Math.floor(rnd() * 16));
      for (const r of records) {
        if (typeof r.text !== 'string' || !(r.raw instanceof Uint8Array)) throw new Error('malformed record');
      }
    }
  });

  it('still decodes every frame a flip, insertion or deletion left intact (60 000 mutations)', () => {
    const rnd = lcg(777);
    const windows: Window[] = [];
    for (const name of ['dpp_qv', 'fmt_v64', 'fmt_v32s', 'defer', 'dpp_posix']) {
      const capture = captureBytes(name);
      windows.push(makeWindow(capture, 0, 300));
      for (let k = 0; k < 3; k++) windows.push(makeWindow(capture, Math.floor(rnd() * (capture.length - 600)), 200));
    }
    let checkedFrames = 0;
    for (let n = 0; n < 60_000; n++) {
      const w = windows[n % windows.length];
      const pos = Math.floor(rnd() * w.bytes.length);
      const op = n % 3;
      let mutated: Uint8Array;
      if (op === 0) {
        mutated = w.bytes.slice();
        mutated[pos] ^= 1 << Math.floor(rnd() * 8);
      } else if (op === 1) {
        mutated = new Uint8Array(w.bytes.length + 1);
        mutated.set(w.bytes.subarray(0, pos));
        mutated[pos] = rnd() < 0.3 ? [0x7e, 0x7d, 0x00][Math.floor(rnd() * 3)] : Math.floor(rnd() * 256);
        mutated.set(w.bytes.subarray(pos), pos + 1);
      } else {
        mutated = new Uint8Array(w.bytes.length - 1);
        mutated.set(w.bytes.subarray(0, pos));
        mutated.set(w.bytes.subarray(pos + 1), pos);
      }
      const records = decode(mutated);
      let j = 0;
      for (const f of w.frames) {
        // Touched: the mutation hit the frame, its closing flag, the flag before it or the byte
        // before that flag (an escape there would swallow it).
        if (pos >= f.start - 2 && pos <= f.flag) continue;
        while (j < records.length && !sameBytes(records[j].raw, f.raw)) j++;
        if (j === records.length)
          throw new Error(`case ${n}: intact frame ${hex(f.raw)} at ${f.start} was not decoded`);
        // Before the mutation nothing differs, so neither may the record (fields compared every 16th case).
        if (
          f.flag < pos &&
          (summary(records[j]) !== f.record ||
            (n % 16 === 0 && JSON.stringify(jsonSafe(records[j].fields)) !== f.fields))
        ) {
          throw new Error(`case ${n}: frame at ${f.start}, before the mutation at ${pos}, decoded differently`);
        }
        checkedFrames++;
        j++;
      }
    }
    expect(checkedFrames).toBeGreaterThan(500_000);
  });
});
