import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder, QsFrameBuilder, QsPayloadWriter, QsRecordId, TextBlocks } from '@tracehub/qs';
import { seededRandom } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { PayloadReader } from '../src/reader.js';
import { SameFrameLines, timeBytesOf } from '../src/same-frame-lines.js';

// A frame that comes again byte for byte (timestamp, sequence number and checksum aside) is
// written from the line kept for it, before its parser runs. These tests decode streams built to
// come back to the same frames across every way a frame reaches the decoder (in place in a
// chunk, through the deframer's buffer when escaped or cut by a chunk's end) and across changes
// of the dictionaries, and compare with the string formatter, which keeps nothing.

const ctx = { hostNs: 0n };

/** `v` as `size` little-endian bytes. */
const le = (v: number, size: number) => Array.from({ length: size }, (_, i) => (v >>> (8 * i)) & 0xff);
/** `s` as a target's zero-terminated string. */
const str = (s: string) => [...[...s].map((ch) => ch.charCodeAt(0)), 0];

/** Cuts `bytes` into chunks of `size`. */
function* chunks(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let off = 0; off < bytes.length; off += size) yield bytes.subarray(off, off + size);
}

/** `tracehub decode`'s text: lines written as bytes by the decoder, the rest as they come. */
function textAsBytes(stream: Uint8Array, chunkSize: number): string {
  const blocks = new TextBlocks('latin1');
  const decoder = new QsDecoder();
  decoder.textTo(blocks);
  const emit = (r: DecodedRecord) => {
    if (r.text !== '') blocks.line(r.text);
  };
  for (const chunk of chunks(stream, chunkSize)) decoder.push(chunk, ctx, emit);
  decoder.end(ctx, emit);
  return Buffer.concat(blocks.take()).toString('latin1');
}

/** The string formatter's text of the same stream. */
function textAsStrings(stream: Uint8Array): string {
  const decoder = new QsDecoder();
  let text = '';
  const emit = (r: DecodedRecord) => {
    if (r.text !== '') text += `${r.text}\n`;
  };
  decoder.push(stream, ctx, emit);
  decoder.end(ctx, emit);
  return text;
}

/** A repeatable pseudo-random sequence: `rnd` in [0, 1), `int(n)` in [0, n). */
function seeded(seed: number): { rnd: () => number; int: (n: number) => number } {
  const rnd = seededRandom(seed);
  return { rnd, int: (n: number) => Math.floor(rnd() * n) };
}

describe('frames found again by their bytes', () => {
  it('print the line kept for them with their own timestamp, and anew once a dictionary renamed what they show', () => {
    const frames = new QsFrameBuilder();
    const parts: Uint8Array[] = [];
    const add = (id: number, payload: number[]) => parts.push(frames.frame(id, new Uint8Array(payload)));
    const name = (id: number, key: number[], s: string) => add(id, [...key, ...str(s)]);
    // The object 0x7E7D1000 is escaped in every frame that names it (its bytes are QS's flag and
    // escape): those frames reach the decoder through the deframer's buffer, not in place.
    const objects = [0x1000, 0x7e7d1000];
    const dispatch = (t: number, o: number) =>
      add(QsRecordId.QS_QEP_DISPATCH, [...le(t, 4), ...le(5, 2), ...le(o, 4), ...le(0x4000, 4)]);
    name(QsRecordId.QS_OBJ_DICT, le(0x1000, 4), 'l_philo');
    name(QsRecordId.QS_OBJ_DICT, le(0x7e7d1000, 4), 'l_table');
    name(QsRecordId.QS_FUN_DICT, le(0x4000, 4), 'Philo_eating');
    name(QsRecordId.QS_SIG_DICT, [...le(5, 2), ...le(0, 4)], 'EAT_SIG');
    for (let i = 0; i < 40; i++) dispatch(1000 + i, objects[i % 2]);
    // The same frame one byte longer: a length error, whatever was kept for its shorter self.
    add(QsRecordId.QS_QEP_DISPATCH, [...le(2000, 4), ...le(5, 2), ...le(0x1000, 4), ...le(0x4000, 4), 0]);
    name(QsRecordId.QS_OBJ_DICT, le(0x1000, 4), 'l_other');
    for (let i = 0; i < 4; i++) dispatch(3000 + i, 0x1000);
    // Timestamps past 2^31 and at 2^32 - 1 are read from the frame as the parser reads them.
    dispatch(0x80000000, 0x1000);
    dispatch(0xffffffff, 0x1000);
    const stream = Buffer.concat(parts);
    const expected = textAsStrings(stream);
    // In one chunk, and cut into chunks of 7 and 64 bytes (frames across chunk ends).
    for (const size of [stream.length, 7, 64]) expect(textAsBytes(stream, size)).toBe(expected);
    const lines = expected.split('\n');
    expect(lines.filter((l) => l.includes('Disp===>')).slice(-8)).toEqual([
      '0000001038 Disp===> Obj=l_philo,Sig=EAT_SIG,State=Philo_eating',
      '0000001039 Disp===> Obj=l_table,Sig=EAT_SIG,State=Philo_eating',
      '0000003000 Disp===> Obj=l_other,Sig=EAT_SIG,State=Philo_eating',
      '0000003001 Disp===> Obj=l_other,Sig=EAT_SIG,State=Philo_eating',
      '0000003002 Disp===> Obj=l_other,Sig=EAT_SIG,State=Philo_eating',
      '0000003003 Disp===> Obj=l_other,Sig=EAT_SIG,State=Philo_eating',
      '2147483648 Disp===> Obj=l_other,Sig=EAT_SIG,State=Philo_eating',
      '4294967295 Disp===> Obj=l_other,Sig=EAT_SIG,State=Philo_eating',
    ]);
    expect(lines.some((l) => l.includes('1 more bytes') || l.includes('ERROR'))).toBe(true);
  });

  it("are the string formatter's text on 2 000 fuzzed streams of a few frames repeated, chunked anyhow", () => {
    const { rnd, int } = seeded(20261128);
    const I = QsRecordId;
    for (let n = 0; n < 2000; n++) {
      const frames = new QsFrameBuilder();
      const parts: Uint8Array[] = [];
      const add = (id: number, payload: number[]) => parts.push(frames.frame(id, new Uint8Array(payload)));
      // A handful of distinct frames, each sent many times with new timestamps.
      const kinds = Array.from({ length: 1 + int(5) }, () => {
        const o = [0x1000, 0x7e00, 0x7d7e7d7e, 0][int(4)];
        const s = int(4);
        const which = int(4);
        if (which === 0)
          return (t: number) => add(I.QS_QEP_DISPATCH, [...le(t, 4), ...le(s, 2), ...le(o, 4), ...le(0x4000, 4)]);
        if (which === 1) return () => add(I.QS_QEP_STATE_ENTRY, [...le(o, 4), ...le(0x4000, 4)]);
        if (which === 2)
          return (t: number) =>
            add(I.QS_QF_ACTIVE_POST, [...le(t, 4), ...le(o, 4), ...le(s, 2), ...le(o, 4), 0, 0, 3, 2]);
        return (t: number) => add(I.QS_QF_NEW, [...le(t, 4), ...le(16, 2), ...le(s, 2)]);
      });
      for (let k = 0; k < 60; k++) {
        const x = rnd();
        if (x < 0.05) add(I.QS_OBJ_DICT, [...le([0x1000, 0x7e00][int(2)], 4), ...str(`o${int(3)}`)]);
        else if (x < 0.08) add(I.QS_SIG_DICT, [...le(int(4), 2), ...le(0, 4), ...str(`S${int(3)}`)]);
        else if (x < 0.1) parts.push(Uint8Array.of(int(256), 0x7e));
        else kinds[int(kinds.length)](rnd() < 0.1 ? 0xffffffff : int(2 ** 32));
      }
      const stream = Buffer.concat(parts);
      expect(textAsBytes(stream, 1 + int(80))).toBe(textAsStrings(stream));
    }
  });
});

describe('frames found again after a target reset', () => {
  /** A target info of QP 7.4 with the default sizes, with or without a reset. */
  const targetInfo = (reset: boolean) =>
    new QsPayloadWriter()
      .u8(reset ? 0xff : 0)
      .u16(740)
      .raw([0x22, 0x42, 0x22, 0x44, 0x04, 16, 0x13, 1, 2, 3, 4, 5, 26])
      .toBytes();

  it("are the string formatter's text on 300 fuzzed streams of sessions that send their dictionaries again, the same or changed", () => {
    const { rnd, int } = seeded(20261129);
    const I = QsRecordId;
    const objects = [0x1000, 0x7e00, 0x2000];
    for (let n = 0; n < 300; n++) {
      const frames = new QsFrameBuilder();
      const parts: Uint8Array[] = [];
      const add = (id: number, payload: number[]) => parts.push(frames.frame(id, new Uint8Array(payload)));
      // The dictionary entries of one session, sent in this order: most sessions send the same
      // ones again (a target restarting), some another name or one entry fewer.
      const entries: (() => void)[] = [
        ...objects.map((o, i) => () => add(I.QS_OBJ_DICT, [...le(o, 4), ...str(`o${i}`)])),
        () => add(I.QS_FUN_DICT, [...le(0x4000, 4), ...str('f0')]),
        () => add(I.QS_SIG_DICT, [...le(1, 2), ...le(0, 4), ...str('S1')]),
        () => add(I.QS_SIG_DICT, [...le(2, 2), ...le(0x1000, 4), ...str('S2')]),
        () => add(I.QS_SIG_DICT, [...le(0, 2), ...le(0x2000, 4), ...str('S0')]),
        () => add(I.QS_USR_DICT, [100, ...str('PHILO_STAT')]),
        () => add(I.QS_USR_DICT, [101, ...str('PAUSED_STAT')]),
      ];
      // User records of integers, strings and floats (written as bytes), one of an enum (not),
      // one cut short, and one of a record without a dictionary entry.
      const userPayloads = [
        [0x11, int(3), 0x08, ...str(['thinking', 'eating'][int(2)])],
        [0x03, ...le(int(3), 2), 0x46, 0, 0, 0x80, 0x3f],
        [0x00, 1],
        [0x04, 1, 2],
      ];
      const records = () => {
        for (let k = 0; k < 1 + int(12); k++) {
          const o = objects[int(3)];
          const s = int(4);
          const t = int(2 ** 32);
          const which = int(4);
          if (which === 0) add(I.QS_QEP_DISPATCH, [...le(t, 4), ...le(s, 2), ...le(o, 4), ...le(0x4000, 4)]);
          else if (which === 1) add(I.QS_QEP_STATE_ENTRY, [...le(o, 4), ...le(0x4000, 4)]);
          else if (which === 2) add(100 + int(3), [...le(t, 4), ...userPayloads[int(userPayloads.length)]]);
          else add(I.QS_QF_ACTIVE_POST, [...le(t, 4), ...le(o, 4), ...le(s, 2), ...le(o, 4), 0, 0, 3, 2]);
        }
      };
      for (let session = 0; session < 2 + int(6); session++) {
        add(I.QS_TARGET_INFO, [...targetInfo(rnd() < 0.9)]);
        const skip = rnd() < 0.2 ? int(entries.length) : -1;
        entries.forEach((send, i) => {
          if (i === skip) return;
          const x = rnd();
          if (x < 0.05) add(I.QS_OBJ_DICT, [...le(objects[int(3)], 4), ...str(`r${int(2)}`)]);
          else if (x < 0.1) add(I.QS_USR_DICT, [100 + int(2), ...str(`U${int(2)}`)]);
          else send();
          // Records between the entries, as a target's start-up sends them.
          if (rnd() < 0.3) records();
        });
        for (let k = 0; k < 4; k++) records();
      }
      const stream = Buffer.concat(parts);
      expect(textAsBytes(stream, 1 + int(120))).toBe(textAsStrings(stream));
    }
  });
});

describe('SameFrameLines', () => {
  /**
   * A QS frame as the deframer hands it over (seq, id, payload, checksum), in a buffer that goes
   * on past it as a chunk does (its flag and the next frame): a frame's last word is read whole.
   * One within three bytes of its buffer's end is neither kept nor found.
   */
  const frame = (id: number, payload: number[]) => Uint8Array.from([1, id, ...payload, 0, 0x7e, 2, 8, 0]);
  const frameLength = (f: Uint8Array) => f.length - 4;
  const lines = Int32Array.of(0x64636261, 0x68676665);
  const reader = new PayloadReader();

  it('finds a frame kept, with the timestamp of the frame looked up, while the stamp is the one it was kept with', () => {
    const kept = new SameFrameLines();
    const a = frame(8, [...le(100, 4), 1, 2, 3, 4, 5]);
    kept.keep(a, 0, frameLength(a), timeBytesOf(reader, a, 0, frameLength(a), 100, 4), 7, 1, lines, 0, 8);
    const again = frame(8, [...le(0xfffffffe, 4), 1, 2, 3, 4, 5]);
    const at = kept.find(again, 0, frameLength(again), 7, 1);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(kept.time[0]).toBe(0xfffffffe);
    expect(kept.lineLength).toBe(8);
    expect(Array.from(kept.rows.subarray(at, at + 2))).toEqual(Array.from(lines));
    // Another byte differs, or one more byte: not found.
    const other = frame(8, [...le(5, 4), 1, 2, 3, 4, 6]);
    expect(kept.find(other, 0, frameLength(other), 7, 1)).toBe(-1);
    const longer = frame(8, [...le(5, 4), 1, 2, 3, 4, 5, 0]);
    expect(kept.find(longer, 0, frameLength(longer), 7, 1)).toBe(-1);
    // The dictionaries changed, and came back to what they were (a target sending them again).
    expect(kept.find(again, 0, frameLength(again), 8, 1)).toBe(-1);
    expect(kept.find(again, 0, frameLength(again), 7, 1)).toBe(at);
    // The configuration changed: where each record's timestamp is is learnt again.
    expect(kept.find(again, 0, frameLength(again), 7, 2)).toBe(-1);
    expect(kept.find(again, 0, frameLength(again), 7, 2)).toBe(-1);
  });

  it('never finds frames of a record whose printed timestamp is not the bytes its payload starts with', () => {
    const kept = new SameFrameLines();
    const a = frame(8, [...le(100, 4), 1, 2, 3]);
    kept.keep(a, 0, frameLength(a), timeBytesOf(reader, a, 0, frameLength(a), 99, 4), 1, 1, lines, 0, 8);
    expect(kept.find(a, 0, frameLength(a), 1, 1)).toBe(-1);
    // Nor after a frame of it whose timestamp does match.
    kept.keep(a, 0, frameLength(a), timeBytesOf(reader, a, 0, frameLength(a), 100, 4), 1, 1, lines, 0, 8);
    expect(kept.find(a, 0, frameLength(a), 1, 1)).toBe(-1);
    // A timestamp of no bytes (a target info's size 0) is printed (as 0), but has no bytes to find.
    expect(timeBytesOf(reader, a, 0, frameLength(a), 0, 0)).toBe(-1);
    // A record without a timestamp (-1) is known by all of its payload.
    const entry = frame(1, [1, 2, 3, 4, 5, 6, 7, 8]);
    kept.keep(
      entry,
      0,
      frameLength(entry),
      timeBytesOf(reader, entry, 0, frameLength(entry), -1, 4),
      1,
      1,
      lines,
      0,
      8,
    );
    expect(kept.find(entry, 0, frameLength(entry), 1, 1)).toBeGreaterThanOrEqual(0);
    expect(kept.time[0]).toBe(-1);
  });

  it("neither keeps nor finds a frame that ends too near its buffer's end to read its last word whole", () => {
    const kept = new SameFrameLines();
    const a = frame(8, [...le(100, 4), 1, 2, 3, 4, 5]);
    const atEnd = a.subarray(0, frameLength(a) + 1);
    kept.keep(atEnd, 0, frameLength(a), timeBytesOf(reader, atEnd, 0, frameLength(a), 100, 4), 1, 1, lines, 0, 8);
    expect(kept.find(a, 0, frameLength(a), 1, 1)).toBe(-1);
    kept.keep(a, 0, frameLength(a), timeBytesOf(reader, a, 0, frameLength(a), 100, 4), 1, 1, lines, 0, 8);
    expect(kept.find(atEnd, 0, frameLength(a), 1, 1)).toBe(-1);
    expect(kept.find(a, 0, frameLength(a), 1, 1)).toBeGreaterThanOrEqual(0);
  });

  it('stops looking frames up for a while when fewer than half of a window of look-ups found theirs', () => {
    const kept = new SameFrameLines();
    const a = frame(8, [...le(1, 4), 9, 9]);
    kept.keep(a, 0, frameLength(a), timeBytesOf(reader, a, 0, frameLength(a), 1, 4), 1, 1, lines, 0, 8);
    const miss = frame(8, [...le(1, 4), 9, 8]);
    // 4 095 misses and the look-up that ends the window, which finds.
    for (let i = 0; i < 4095; i++) expect(kept.find(miss, 0, frameLength(miss), 1, 1)).toBe(-1);
    expect(kept.find(a, 0, frameLength(a), 1, 1)).toBeGreaterThanOrEqual(0);
    // Paused for the next 8 windows: the kept frame is not looked up (and the decoder keeps none).
    let found = 0;
    for (let i = 0; i < 8 * 4096; i++) {
      expect(kept.keeping).toBe(false);
      if (kept.find(a, 0, frameLength(a), 1, 1) >= 0) found++;
    }
    expect(found).toBe(0);
    expect(kept.keeping).toBe(true);
    expect(kept.find(a, 0, frameLength(a), 1, 1)).toBeGreaterThanOrEqual(0);
  });
});
