import type { BatchRecord } from './record.js';

/**
 * What two runs are compared by, of a run of records of one session: how many records of each
 * source and name it holds, and its trace records in order as their alignment keys. Computed
 * where the records are objects already (the decoder's summary, storage's parsed path), it is
 * kept beside a stored block, so that comparing two sessions reads digests, not records.
 *
 * JSON-safe and ASCII in its order (it travels in a message header with the summary).
 */
export interface RecordsDigest {
  /** The alignment keys (`alignmentKey`) of the run's trace records, each once, in first-seen order. */
  keys: string[];
  /**
   * The run's trace records (kind `record`) in seq order, each as the index of its key in
   * `keys`, written in `DIGEST_DIGITS`, `digestWidth(keys.length)` digits a record.
   */
  order: string;
  /** Records of every kind by source and name: `[source, name, count]`. */
  counts: Array<[string, string, number]>;
}

/** An object or signal that is a target address: it differs between builds, so it is compared as one. */
const ADDRESS = /^(0x)?[0-9a-f]{6,16}$/i;

/** An object, signal or state with target addresses made one (`(address)`), '' when absent. */
export const unaddressed = (s: string | null | undefined): string =>
  s === undefined || s === null ? '' : ADDRESS.test(s) ? '(address)' : s;

/** Where a record comes from: its active object (QS) or master/channel (STP), '' for neither. */
export function sourceOf(r: BatchRecord): string {
  if (r.stp) return `M${r.stp.master}/C${r.stp.channel}`;
  return unaddressed(r.qs?.obj);
}

/** The records two runs are aligned by: the trace's own, not dictionaries, target info or decoder notices. */
export const isAlignedRecord = (r: BatchRecord): boolean => r.kind === 'record';

/** Between the parts of a key: a character no name, object or signal holds. */
const SEPARATOR = '\u001f';

/** The digits an order is written in: 64, all ASCII and plain in JSON. */
export const DIGEST_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_';
const DIGIT_CHARS = DIGEST_DIGITS.split('');
const DIGIT_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < DIGEST_DIGITS.length; i++) DIGIT_VALUE[DIGEST_DIGITS.charCodeAt(i)] = i;

/** Digits a record takes in the order of a digest with `keyCount` keys. */
export function digestWidth(keyCount: number): number {
  let width = 1;
  for (let n = 64; n < keyCount; n *= 64) width++;
  return width;
}

/** What a trace record is aligned by: name, object, signal, source and the state a transition enters (addresses made one). */
export function alignmentKey(r: BatchRecord, state: string | null): string {
  return `${r.name}${SEPARATOR}${unaddressed(r.qs?.obj)}${SEPARATOR}${unaddressed(r.qs?.sig)}${SEPARATOR}${sourceOf(r)}${SEPARATOR}${unaddressed(state)}`;
}

/** A key's parts: name, object, signal, source, state. */
export function alignmentKeyParts(key: string): [string, string, string, string, string] {
  const [name = '', obj = '', sig = '', source = '', state = ''] = key.split(SEPARATOR);
  return [name, obj, sig, source, state];
}

/** The count key of a record: source and name. */
const countKey = (source: string, name: string) => `${source}${SEPARATOR}${name}`;

/** What records of one shape (name, object or channel, signal, state, kind as given) count in, and their key's index (-1: not aligned). */
interface Shape {
  count: [string, string, number];
  index: number;
}

/** The map under `key` of a level of nested maps, made when missing. */
function level(map: Map<unknown, unknown>, key: unknown): Map<unknown, unknown> {
  let next = map.get(key) as Map<unknown, unknown> | undefined;
  if (!next) map.set(key, (next = new Map()));
  return next;
}

/** Builds a digest record by record, in seq order. */
export class DigestBuilder {
  private readonly keyIndex = new Map<string, number>();
  private readonly order: number[] = [];
  private readonly counts = new Map<string, [string, string, number]>();
  /**
   * Shapes seen, by the record's own values (nested maps: no key text made, no address
   * pattern tried, for a record of a shape seen before; a trace repeats a few shapes).
   */
  private readonly shapes = new Map<unknown, unknown>();

  /** `state`: the state the record enters (contracts' `stateOf`), null for none. */
  add(r: BatchRecord, state: string | null): void {
    const channel = r.stp ? r.stp.master * 65536 + r.stp.channel : undefined;
    const byKind = level(level(level(level(level(this.shapes, r.name), channel), r.qs?.obj), r.qs?.sig), state);
    let shape = byKind.get(r.kind) as Shape | undefined;
    if (!shape) byKind.set(r.kind, (shape = this.newShape(r, state)));
    shape.count[2]++;
    if (shape.index >= 0) this.order.push(shape.index);
  }

  private newShape(r: BatchRecord, state: string | null): Shape {
    const source = sourceOf(r);
    const ck = countKey(source, r.name);
    let count = this.counts.get(ck);
    if (!count) this.counts.set(ck, (count = [source, r.name, 0]));
    return { count, index: isAlignedRecord(r) ? this.indexOf(alignmentKey(r, state)) : -1 };
  }

  private indexOf(key: string): number {
    let index = this.keyIndex.get(key);
    if (index === undefined) {
      index = this.keyIndex.size;
      this.keyIndex.set(key, index);
    }
    return index;
  }

  /** Adds what `digest` holds, after what was added before. */
  addDigest(digest: RecordsDigest): void {
    for (const [source, name, n] of digest.counts) {
      const ck = countKey(source, name);
      const count = this.counts.get(ck);
      if (count) count[2] += n;
      else this.counts.set(ck, [source, name, n]);
    }
    const ids = digest.keys.map((key) => this.indexOf(key));
    forEachDigestKey(digest, (index) => this.order.push(ids[index]));
  }

  digest(): RecordsDigest {
    const keys = [...this.keyIndex.keys()];
    const width = digestWidth(keys.length);
    const digits: string[] = [];
    for (const index of this.order) {
      let text = '';
      for (let i = 0, n = index; i < width; i++, n = Math.floor(n / 64)) text = DIGIT_CHARS[n % 64] + text;
      digits.push(text);
    }
    return { keys, order: digits.join(''), counts: [...this.counts.values()].map((c) => [c[0], c[1], c[2]]) };
  }
}

/**
 * Calls `visit` with the key index of each trace record of a digest, in order. Throws on an
 * order that is not `DIGEST_DIGITS` or names a key the digest does not have.
 */
export function forEachDigestKey(digest: RecordsDigest, visit: (index: number) => void): void {
  const { order, keys } = digest;
  const width = digestWidth(keys.length);
  if (order.length % width !== 0) throw new Error('a records digest has a cut order');
  for (let i = 0; i < order.length; i += width) {
    let index = 0;
    for (let j = 0; j < width; j++) {
      const c = order.charCodeAt(i + j);
      const v = c < 128 ? DIGIT_VALUE[c] : -1;
      if (v < 0) throw new Error('a records digest has a character outside its digits');
      index = index * 64 + v;
    }
    if (index >= keys.length) throw new Error('a records digest names a key it does not have');
    visit(index);
  }
}

/** Trace records a digest holds in its order. */
export const digestLength = (digest: RecordsDigest): number => digest.order.length / digestWidth(digest.keys.length);

/** The digest of records of one session, in seq order. */
export function digestRecords(
  records: readonly BatchRecord[],
  stateOf: (r: BatchRecord) => string | null,
): RecordsDigest {
  const builder = new DigestBuilder();
  for (const r of records) builder.add(r, stateOf(r));
  return builder.digest();
}

/** The digest of two runs of one session, `a` before `b`; null when either has none. */
export function mergeDigests(
  a: RecordsDigest | null | undefined,
  b: RecordsDigest | null | undefined,
): RecordsDigest | null {
  if (!a || !b) return null;
  const builder = new DigestBuilder();
  builder.addDigest(a);
  builder.addDigest(b);
  return builder.digest();
}
