import { describe, expect, it } from 'vitest';
import { QsDeframer, QsFrameError, type QsFrameSink } from '../src/deframer.js';

/**
 * The receiver of spec 3 written the plain way, one byte at a time: the deframer's fast path
 * (frames summed in place, four bytes at a time) must report exactly what this reports, wherever
 * the flags and escapes fall relative to word boundaries and chunk ends.
 */
const FLAG = 0x7e;
const ESC = 0x7d;
const MAX = 512;

type Event = string;

function referenceEvents(stream: Uint8Array): Event[] {
  const events: Event[] = [];
  const buf: number[] = [];
  let sum = 0;
  let esc = false;
  let lastSeq = 0;
  let justStarted = true;
  const end = () => {
    if ((sum & 0xff) !== 0xff) events.push(`error ${QsFrameError.BAD_CHECKSUM} ${buf.join(',')}`);
    else if (buf.length < 3) events.push(`error ${QsFrameError.TOO_SHORT} ${buf.join(',')}`);
    else {
      const seq = buf[0];
      const gapFrom = !justStarted && seq !== ((lastSeq + 1) & 0xff) && buf[1] !== 0 ? lastSeq : -1;
      justStarted = false;
      lastSeq = seq;
      events.push(`frame ${gapFrom} ${buf.join(',')}`);
    }
  };
  for (const byte of stream) {
    let b = byte;
    let overflow: QsFrameError = QsFrameError.TOO_LONG;
    if (esc) {
      esc = false;
      b ^= 0x20;
      overflow = QsFrameError.TOO_LONG_ESCAPED;
    } else if (byte === ESC) {
      esc = true;
      continue;
    } else if (byte === FLAG) {
      end();
      buf.length = 0;
      sum = 0;
      continue;
    }
    if (buf.length < MAX) {
      sum += b;
      buf.push(b);
    } else {
      events.push(`error ${overflow} ${buf.join(',')}`);
      buf.length = 0;
      sum = 0;
    }
  }
  return events;
}

function deframerEvents(stream: Uint8Array, cuts: number[], shift: number): Event[] {
  const events: Event[] = [];
  const sink: QsFrameSink = {
    frame: (buf, start, len, gapFrom) =>
      events.push(`frame ${gapFrom} ${[...buf.subarray(start, start + len)].join(',')}`),
    frameError: (error, buf, start, len) =>
      events.push(`error ${error} ${[...buf.subarray(start, start + len)].join(',')}`),
  };
  const d = new QsDeframer(sink);
  // Chunks at every alignment: each is copied to `shift` bytes into a larger buffer.
  let from = 0;
  for (const to of [...cuts, stream.length]) {
    const backing = new Uint8Array(to - from + shift);
    backing.set(stream.subarray(from, to), shift);
    d.push(backing.subarray(shift));
    from = to;
  }
  return events;
}

/** Deterministic generator (a 32-bit LCG) so that a failure can be replayed. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 4294967296;
  };
}

/** A good frame (stuffed, checksummed), its payload rich in flag and escape values. */
function frame(rnd: () => number, seq: number, payloadLen: number): number[] {
  const body = [seq & 0xff, Math.floor(rnd() * 128)];
  for (let i = 0; i < payloadLen; i++) {
    const p = rnd();
    body.push(p < 0.04 ? FLAG : p < 0.08 ? ESC : p < 0.1 ? 0x5e : Math.floor(rnd() * 256));
  }
  let sum = 0;
  for (const b of body) sum += b;
  body.push(~sum & 0xff);
  const out: number[] = [];
  for (const b of body) {
    if (b === FLAG || b === ESC) out.push(ESC, b ^ 0x20);
    else out.push(b);
  }
  out.push(FLAG);
  return out;
}

function stream(rnd: () => number): Uint8Array {
  const bytes: number[] = [];
  let seq = 1;
  const frames = 1 + Math.floor(rnd() * 40);
  for (let f = 0; f < frames; f++) {
    const r = rnd();
    const len = r < 0.05 ? 500 + Math.floor(rnd() * 30) : r < 0.1 ? Math.floor(rnd() * 3) : Math.floor(rnd() * 40);
    bytes.push(...frame(rnd, rnd() < 0.05 ? seq + 2 : seq, len));
    seq++;
  }
  // Damage: flips, insertions (often flags and escapes), deletions.
  const damage = Math.floor(rnd() * 4);
  for (let k = 0; k < damage; k++) {
    const p = Math.floor(rnd() * bytes.length);
    const op = rnd();
    if (op < 0.4) bytes[p] ^= 1 << Math.floor(rnd() * 8);
    else if (op < 0.8) bytes.splice(p, 0, rnd() < 0.5 ? FLAG : rnd() < 0.5 ? ESC : Math.floor(rnd() * 256));
    else bytes.splice(p, 1);
  }
  return Uint8Array.from(bytes);
}

describe('QsDeframer against a byte-at-a-time reference receiver', () => {
  it('reports the same frames and errors for 3 000 random streams, cut anywhere, at every alignment', () => {
    const rnd = lcg(20240611);
    for (let n = 0; n < 3000; n++) {
      const s = stream(rnd);
      const cuts: number[] = [];
      let at = 0;
      while (rnd() < 0.7) {
        at += 1 + Math.floor(rnd() * 80);
        if (at >= s.length) break;
        cuts.push(at);
      }
      const shift = n & 3;
      const expected = referenceEvents(s);
      const got = deframerEvents(s, cuts, shift);
      if (got.length !== expected.length || got.some((e, i) => e !== expected[i])) {
        expect({ case: n, cuts, shift, got }).toEqual({ case: n, cuts, shift, got: expected });
      }
    }
  });

  it('sums long runs without escapes exactly (checksums of 500-byte frames of 0xFF and of 0x00)', () => {
    const rnd = lcg(7);
    for (const fill of [0xff, 0x00, 0x7c, 0x7f, 0xfe]) {
      const body = [1, 70, ...new Array<number>(505).fill(fill)];
      let sum = 0;
      for (const b of body) sum += b;
      const good = [...body, ~sum & 0xff].flatMap((b) => (b === FLAG || b === ESC ? [ESC, b ^ 0x20] : [b]));
      const s = Uint8Array.from([...good, FLAG, ...good.slice(0, -1), (good.at(-1) ?? 0) ^ 1, FLAG]);
      for (let shift = 0; shift < 4; shift++) {
        expect(deframerEvents(s, [Math.floor(rnd() * s.length)], shift)).toEqual(referenceEvents(s));
      }
    }
  });
});
