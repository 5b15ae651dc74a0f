import type { DecodedRecord } from '@tracehub/contracts';
import {
  QS_RECORD_NAMES,
  QsDecoder,
  type QsDecoderOptions,
  QsFrameBuilder,
  QsRecordId,
  TextBlocks,
} from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { qspyCases } from './helpers.js';

// `QsDecoder.textTo` writes the lines of the most frequent records as bytes; the string
// formatter (the records' `text`) is the reference. Both are decoded here from the same
// streams and compared byte for byte: every capture qspy's output is known for, and fuzzed
// streams built to reach every branch of the byte writers and their fall-backs.

const ctx = { hostNs: 0n };

/** Cuts `bytes` into chunks of the given sizes (cycled). */
function* chunks(bytes: Uint8Array, sizes: number[]): Generator<Uint8Array> {
  let i = 0;
  for (let off = 0; off < bytes.length; ) {
    const n = sizes[i++ % sizes.length];
    yield bytes.subarray(off, off + n);
    off += n;
  }
}

/** How many user and predefined records had their line written as bytes, and how many as strings. */
interface Tally {
  userBytes: number;
  userStrings: number;
  predefinedBytes: number;
  /** Predefined records written as bytes, by record id. */
  bytesById?: number[];
}

/** What identifies a record besides its text: written lines must not change it. */
const identity = (r: DecodedRecord) => `${r.kind} ${r.type} ${r.name}`;

/**
 * What `tracehub decode` prints: lines written as bytes by the decoder, the rest added as they
 * come; `records` receives what identifies each record.
 */
function textAsBytes(
  bytes: Uint8Array,
  options: QsDecoderOptions,
  sizes: number[],
  records: string[] = [],
  tally?: Tally,
): Buffer {
  const blocks = new TextBlocks('latin1');
  const decoder = new QsDecoder(options);
  decoder.textTo(blocks);
  const emit = (r: DecodedRecord) => {
    if (r.text !== '') blocks.line(r.text);
    records.push(identity(r));
    if (tally === undefined || (r.kind !== 'record' && r.kind !== 'dict')) return;
    const user = r.type >= 100;
    if (r.text === '' && user) tally.userBytes++;
    else if (r.text === '' && r.name !== 'QS_EMPTY') {
      tally.predefinedBytes++;
      if (tally.bytesById) tally.bytesById[r.type] = (tally.bytesById[r.type] ?? 0) + 1;
    } else if (user) tally.userStrings++;
  };
  for (const chunk of chunks(bytes, sizes)) decoder.push(chunk, ctx, emit);
  decoder.end(ctx, emit);
  return Buffer.concat(blocks.take());
}

/** The same from the string formatter: every record's text, one line each, as Latin-1. */
function textAsStrings(bytes: Uint8Array, options: QsDecoderOptions, sizes: number[], records: string[] = []): Buffer {
  const decoder = new QsDecoder(options);
  let text = '';
  const emit = (r: DecodedRecord) => {
    if (r.text !== '') text += `${r.text}\n`;
    records.push(identity(r));
  };
  for (const chunk of chunks(bytes, sizes)) decoder.push(chunk, ctx, emit);
  decoder.end(ctx, emit);
  return Buffer.from(text, 'latin1');
}

/** `v` as `size` little-endian bytes. */
const le = (v: number, size: number) => Array.from({ length: size }, (_, i) => (v >>> (8 * i)) & 0xff);
/** `s` as a target's zero-terminated string. */
const str = (s: string) => [...[...s].map((ch) => ch.charCodeAt(0)), 0];

/** Frames one after another, numbered from 1 (and any other bytes between them), as one stream. */
function frameStream() {
  const frames = new QsFrameBuilder();
  const parts: Uint8Array[] = [];
  return {
    frame: (id: number, payload: number[]) => {
      parts.push(frames.frame(id, new Uint8Array(payload)));
    },
    bytes: (bytes: Uint8Array) => {
      parts.push(bytes);
    },
    stream: () => Buffer.concat(parts),
  };
}

/** The lines of `stream`'s text written as bytes, checked first to be the string formatter's text. */
function linesBothWays(stream: Buffer): string[] {
  const asBytes = textAsBytes(stream, {}, [stream.length]);
  const asStrings = textAsStrings(stream, {}, [stream.length]);
  expect(asBytes.equals(asStrings), firstDifference(asBytes, asStrings)).toBe(true);
  return asBytes.toString('latin1').split('\n');
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** The first line where two outputs differ, for a readable failure. */
function firstDifference(a: Buffer, b: Buffer): string {
  const al = a.toString('latin1').split('\n');
  const bl = b.toString('latin1').split('\n');
  for (let i = 0; i < Math.max(al.length, bl.length); i++) {
    if (al[i] !== bl[i])
      return `line ${i + 1}:\n  bytes:   ${JSON.stringify(al[i])}\n  strings: ${JSON.stringify(bl[i])}`;
  }
  return 'none';
}

describe('text written as bytes (QsDecoder.textTo)', () => {
  for (const c of qspyCases()) {
    it(`is what qspy printed, and the string formatter's text, for ${c.label}`, () => {
      const qspy = Buffer.from(c.lines.map((l) => `${l}\n`).join(''), 'latin1');
      for (const sizes of c.generated ? [[4096], [1, 7, 64]] : [[4096], [3, 250]]) {
        const byteRecords: string[] = [];
        const stringRecords: string[] = [];
        const asBytes = textAsBytes(c.bytes, c.options, sizes, byteRecords);
        const asStrings = textAsStrings(c.bytes, c.options, sizes, stringRecords);
        expect(asBytes.equals(asStrings), firstDifference(asBytes, asStrings)).toBe(true);
        expect(byteRecords).toEqual(stringRecords);
        expect(asBytes.equals(qspy), firstDifference(asBytes, qspy)).toBe(true);
      }
    });
  }

  it('writes a line that comes again from the bytes it had, and anew once a dictionary renamed what it shows', () => {
    const frames = frameStream();
    const add = frames.frame;
    const name = (id: number, key: number[], s: string) => add(id, [...key, ...str(s)]);
    const entry = () => add(QsRecordId.QS_QEP_STATE_ENTRY, [...le(0x1000, 4), ...le(0x4000, 4)]);
    const dispatch = (t: number) =>
      add(QsRecordId.QS_QEP_DISPATCH, [...le(t, 4), ...le(5, 2), ...le(0x1000, 4), ...le(0x4000, 4)]);
    name(QsRecordId.QS_OBJ_DICT, le(0x1000, 4), 'l_philo');
    name(QsRecordId.QS_FUN_DICT, le(0x4000, 4), 'Philo_eating');
    name(QsRecordId.QS_SIG_DICT, [...le(5, 2), ...le(0, 4)], 'EAT_SIG');
    entry();
    dispatch(100);
    entry();
    dispatch(200);
    name(QsRecordId.QS_OBJ_DICT, le(0x1000, 4), 'l_table');
    entry();
    dispatch(300);
    name(QsRecordId.QS_SIG_DICT, [...le(5, 2), ...le(0, 4)], 'HUNGRY_SIG');
    dispatch(400);
    name(QsRecordId.QS_FUN_DICT, le(0x4000, 4), 'Philo_hungry');
    entry();
    dispatch(500);
    const lines = linesBothWays(frames.stream()).filter((l) => l.includes('St-Entry') || l.includes('Disp===>'));
    expect(lines).toEqual([
      '===RTC===> St-Entry Obj=l_philo,State=Philo_eating',
      '0000000100 Disp===> Obj=l_philo,Sig=EAT_SIG,State=Philo_eating',
      '===RTC===> St-Entry Obj=l_philo,State=Philo_eating',
      '0000000200 Disp===> Obj=l_philo,Sig=EAT_SIG,State=Philo_eating',
      '===RTC===> St-Entry Obj=l_table,State=Philo_eating',
      '0000000300 Disp===> Obj=l_table,Sig=EAT_SIG,State=Philo_eating',
      '0000000400 Disp===> Obj=l_table,Sig=HUNGRY_SIG,State=Philo_eating',
      '===RTC===> St-Entry Obj=l_table,State=Philo_hungry',
      '0000000500 Disp===> Obj=l_table,Sig=HUNGRY_SIG,State=Philo_hungry',
    ]);
  });

  it('writes 8-byte timestamps each side of 2^32 and of ten digits as the string formatter does', () => {
    const frames = frameStream();
    const stamps = [0, 9, 2 ** 32 - 1, 2 ** 32, 9_999_999_999, 10_000_000_000, 2 ** 53 - 1];
    for (const t of stamps) {
      const t8 = [...le(t % 2 ** 32, 4), ...le(Math.floor(t / 2 ** 32), 4)];
      frames.frame(QsRecordId.QS_QEP_DISPATCH, [...t8, ...le(5, 2), ...le(0x1000, 4), ...le(0x4000, 4)]);
    }
    const stream = frames.stream();
    const asBytes = textAsBytes(stream, { timeSize: 8 }, [stream.length]);
    const asStrings = textAsStrings(stream, { timeSize: 8 }, [stream.length]);
    expect(asBytes.equals(asStrings), firstDifference(asBytes, asStrings)).toBe(true);
    const columns = asBytes
      .toString('latin1')
      .split('\n')
      .filter((l) => l.includes('Disp===>'))
      .map((l) => l.slice(0, l.indexOf(' ')));
    expect(columns).toEqual([
      '0000000000',
      '0000000009',
      '4294967295',
      '4294967296',
      '9999999999',
      '10000000000',
      '9007199254740991',
    ]);
  });

  it("cuts a user record's line where qspy's line buffer ends, as the string formatter does", () => {
    // Timestamp and ` USER+000` (19 characters), 64 elements of 15 (` %14u`), then one of 6 to 15
    // and one of 2: lines reaching 985 to 994 characters before the last, each side of the 991
    // that fit in qspy's buffer.
    const frames = frameStream();
    for (let width = 5; width <= 14; width++) {
      const payload = [1, 2, 3, 4];
      for (let e = 0; e < 64; e++) payload.push(0xe1, e);
      payload.push((width << 4) | 0x01, 9, 0x01, 7);
      frames.frame(100, payload);
    }
    const lengths = linesBothWays(frames.stream())
      .slice(0, -1)
      .map((l) => l.length);
    expect(lengths).toEqual([987, 988, 989, 990, 990, 990, 990, 990, 990, 990]);
  });

  it("is the string formatter's text, of the same records, on 3 000 fuzzed streams of the records it writes (each kind of line parts among them), and of others", () => {
    const rnd = lcg(20261126);
    const int = (n: number) => Math.floor(rnd() * n);
    const byteOf = () => (rnd() < 0.1 ? [0x7e, 0x7d, 0x00, 0xff][int(4)] : int(256));
    const latin1 = (n: number) => Array.from({ length: n }, () => String.fromCharCode(32 + int(224))).join('');
    const tally: Tally = { userBytes: 0, userStrings: 0, predefinedBytes: 0, bytesById: [] };
    const I = QsRecordId;
    // The layouts (with QSPY's default sizes) of the records written as LineParts: t timestamp,
    // o object, f function, s signal, n name, then byte counts (pools, refs, counters, rates).
    const layouts: [number, (string | number)[]][] = [
      [I.QS_QEP_STATE_ENTRY, ['o', 'f']],
      [I.QS_QEP_STATE_EXIT, ['o', 'f']],
      [I.QS_QEP_STATE_INIT, ['o', 'f', 'f']],
      [I.QS_QEP_TRAN_HIST, ['o', 'f', 'f']],
      [I.QS_QEP_TRAN_EP, ['o', 'f', 'f']],
      [I.QS_QEP_TRAN_XP, ['o', 'f', 'f']],
      [I.QS_QEP_INIT_TRAN, ['t', 'o', 'f']],
      [I.QS_QEP_TRAN, ['t', 's', 'o', 'f', 'f']],
      [I.QS_QEP_UNHANDLED, ['s', 'o', 'f']],
      [I.QS_QF_ACTIVE_DEFER, ['t', 'o', 'o', 's', 1, 1]],
      [I.QS_QF_ACTIVE_RECALL, ['t', 'o', 'o', 's', 1, 1]],
      [I.QS_QF_ACTIVE_SUBSCRIBE, ['t', 's', 'o']],
      [I.QS_QF_ACTIVE_UNSUBSCRIBE, ['t', 's', 'o']],
      [I.QS_QF_ACTIVE_POST_LIFO, ['t', 's', 'o', 1, 1, 1, 1]],
      [I.QS_QF_EQUEUE_POST, ['t', 's', 'o', 1, 1, 1, 1]],
      [I.QS_QF_EQUEUE_POST_LIFO, ['t', 's', 'o', 1, 1, 1, 1]],
      [I.QS_QF_EQUEUE_POST_ATTEMPT, ['t', 's', 'o', 1, 1, 1, 1]],
      [I.QS_QF_ACTIVE_GET, ['t', 's', 'o', 1, 1, 1]],
      [I.QS_QF_EQUEUE_GET, ['t', 's', 'o', 1, 1, 1]],
      [I.QS_QF_ACTIVE_GET_LAST, ['t', 's', 'o', 1, 1]],
      [I.QS_QF_EQUEUE_GET_LAST, ['t', 's', 'o', 1, 1]],
      [I.QS_QF_NEW, ['t', 2, 's']],
      [I.QS_QF_NEW_ATTEMPT, ['t', 2, 's']],
      [I.QS_QF_MPOOL_GET, ['t', 'o', 2, 2]],
      [I.QS_QF_MPOOL_GET_ATTEMPT, ['t', 'o', 2, 2]],
      [I.QS_QF_MPOOL_PUT, ['t', 'o', 2]],
      [I.QS_QF_PUBLISH, ['t', 'o', 's', 1, 1]],
      [I.QS_QF_NEW_REF, ['t', 's', 1, 1]],
      [I.QS_QF_GC_ATTEMPT, ['t', 's', 1, 1]],
      [I.QS_QF_GC, ['t', 's', 1, 1]],
      [I.QS_QF_DELETE_REF, ['t', 's', 1, 1]],
      [I.QS_QF_TIMEEVT_DISARM_ATTEMPT, ['t', 'o', 'o', 1]],
      [I.QS_QF_TIMEEVT_POST, ['t', 'o', 's', 'o', 1]],
      [I.QS_QF_TIMEEVT_AUTO_DISARM, ['o', 'o', 1]],
      [I.QS_QF_TICK, [4, 1]],
      [I.QS_SIG_DICT, ['s', 'o', 'n']],
      [I.QS_OBJ_DICT, ['o', 'n']],
      [I.QS_FUN_DICT, ['f', 'n']],
      [I.QS_USR_DICT, [1, 'n']],
    ];
    for (let n = 0; n < 3000; n++) {
      const frames = frameStream();
      const add = frames.frame;
      const objs = [0x1000, 0x2000, 0x3000, 0];
      for (let k = 0; k < 40; k++) {
        const x = rnd();
        const t = rnd() < 0.05 ? 0xffffffff : int(2 ** 32);
        if (x < 0.08) {
          // Names for the objects, signals and user records the others print (the kept tails change).
          const which = int(4);
          if (which === 0) add(QsRecordId.QS_OBJ_DICT, [...le(objs[int(3)], 4), ...str(latin1(1 + int(12)))]);
          else if (which === 1)
            add(QsRecordId.QS_SIG_DICT, [...le(int(8), 2), ...le(objs[int(4)], 4), ...str(latin1(1 + int(12)))]);
          else if (which === 2) add(QsRecordId.QS_USR_DICT, [100 + int(8), ...str(latin1(1 + int(20)))]);
          else add(QsRecordId.QS_FUN_DICT, [...le([0x4000, 0x5000][int(2)], 4), ...str(latin1(1 + int(12)))]);
        } else if (x < 0.18) {
          // Any predefined record, its payload random and of any length (lines taken back).
          add(int(100), Array.from({ length: int(28) }, byteOf));
        } else if (x < 0.45) {
          // Dispatch-like, post, and time-event records at their length, or one off it (length errors).
          const kind = int(6);
          const id = [
            QsRecordId.QS_QEP_DISPATCH,
            QsRecordId.QS_QEP_INTERN_TRAN,
            QsRecordId.QS_QEP_IGNORED,
            QsRecordId.QS_QF_ACTIVE_POST,
            QsRecordId.QS_QF_ACTIVE_POST_ATTEMPT,
            rnd() < 0.5 ? QsRecordId.QS_QF_TIMEEVT_ARM : QsRecordId.QS_QF_TIMEEVT_DISARM,
          ][kind];
          const body =
            kind < 3
              ? [...le(t, 4), ...le(int(8), 2), ...le(objs[int(4)], 4), ...le(int(2 ** 32), 4)]
              : kind < 5
                ? [
                    ...le(t, 4),
                    ...le(objs[int(4)], 4),
                    ...le(int(8), 2),
                    ...le(objs[int(4)], 4),
                    int(3),
                    int(3),
                    int(256),
                    int(256),
                  ]
                : [
                    ...le(t, 4),
                    ...le(objs[int(4)], 4),
                    ...le(objs[int(4)], 4),
                    ...le(int(70000), 2),
                    ...le(int(70000), 2),
                    int(4),
                  ];
          const cut = rnd() < 0.15 ? [-1, 1][int(2)] : 0;
          add(id, cut < 0 ? body.slice(0, cut) : cut > 0 ? [...body, byteOf()] : body);
        } else if (x < 0.65) {
          // The records written as LineParts, at their length or one off it.
          const [id, layout] = layouts[int(layouts.length)];
          const named: Record<string, () => number[]> = {
            t: () => le(t, 4),
            o: () => le(objs[int(4)], 4),
            f: () => le([0x4000, 0x5000, int(2 ** 32)][int(3)], 4),
            s: () => le(int(8), 2),
            n: () => str(latin1(1 + int(12))),
          };
          const body = layout.flatMap((field) =>
            typeof field === 'number' ? le(int(rnd() < 0.9 ? 256 : 2 ** (8 * field)), field) : named[field](),
          );
          const cut = rnd() < 0.1 ? [-1, 1][int(2)] : 0;
          add(id, cut < 0 ? body.slice(0, cut) : cut > 0 ? [...body, byteOf()] : body);
        } else {
          // User records: elements of every type and width, values of every size, long strings,
          // lines past qspy's buffer, payloads that end inside an element.
          const payload = [...le(t, 4)];
          const elements = rnd() < 0.1 ? 40 + int(60) : int(8);
          for (let e = 0; e < elements; e++) {
            const type = rnd() < 0.8 ? [0, 1, 2, 3, 4, 5, 6, 7, 8][int(9)] : int(16);
            const width = int(16);
            payload.push((width << 4) | type);
            if (type === 8) payload.push(...str(latin1(rnd() < 0.05 ? 300 + int(400) : int(24))));
            else if (type === 9) payload.push(int(6), ...Array.from({ length: 5 }, byteOf));
            else
              payload.push(...Array.from({ length: [1, 1, 2, 2, 4, 4, 4, 8, 0, 0, 6, 4, 4, 8, 8, 4][type] }, byteOf));
          }
          const cut = rnd() < 0.1 ? int(Math.min(payload.length, 6)) : 0;
          add(100 + int(10), payload.slice(0, payload.length - cut));
        }
        if (rnd() < 0.02) frames.bytes(new Uint8Array(Array.from({ length: 1 + int(6) }, byteOf)));
      }
      const stream = frames.stream();
      const sizes = [1 + int(300), 1 + int(40)];
      const byteRecords: string[] = [];
      const stringRecords: string[] = [];
      const asBytes = textAsBytes(stream, {}, sizes, byteRecords, tally);
      const asStrings = textAsStrings(stream, {}, sizes, stringRecords);
      if (!asBytes.equals(asStrings)) throw new Error(`stream ${n}: ${firstDifference(asBytes, asStrings)}`);
      if (byteRecords.join('\n') !== stringRecords.join('\n')) throw new Error(`stream ${n}: records differ`);
    }
    // Both ways were taken often: lines written as bytes, and user records left to the strings.
    expect(tally.userBytes).toBeGreaterThan(10_000);
    expect(tally.userStrings).toBeGreaterThan(10_000);
    expect(tally.predefinedBytes).toBeGreaterThan(20_000);
    for (const [id] of layouts) expect(tally.bytesById?.[id] ?? 0, QS_RECORD_NAMES[id]).toBeGreaterThan(100);
  });
});
