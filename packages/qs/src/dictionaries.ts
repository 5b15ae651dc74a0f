import type { JsonValue } from '@tracehub/contracts';
import { hex8, hex16, zeroPad } from './format.js';
import type { DictionaryContent, RenderStates } from './render-states.js';

/**
 * A 64-bit object/function address as a Map key: a plain number while it is exact
 * (below 2^53, i.e. every real embedded address), otherwise the string `hi:lo`.
 */
export type QsKey = number | string;

const TWO_32 = 4294967296;

export function makeKey(hi: number, lo: number): QsKey {
  if (hi === 0) return lo;
  return hi < 0x200000 ? hi * TWO_32 + lo : `${hi}:${lo}`;
}

export function keyLo(key: QsKey): number {
  if (typeof key === 'number') return key % TWO_32;
  return Number(key.slice(key.indexOf(':') + 1));
}

export function keyHi(key: QsKey): number {
  if (typeof key === 'number') return Math.floor(key / TWO_32);
  return Number(key.slice(0, key.indexOf(':')));
}

/** How QSPY renders a key it does not know, by the dictionary's key size (spec 7.3). */
export function renderUnknownKey(key: QsKey, keySize: number): string {
  if (keySize <= 1) return zeroPad(keyLo(key) | 0, 3);
  if (keySize <= 4) return `0x${hex8(keyLo(key))}`;
  return `0x${hex16(keyHi(key), keyLo(key))}`;
}

/** How many renderings of unknown keys a dictionary remembers. */
const UNKNOWN_CACHE_MAX = 1024;

/** QSPY 7.4 keeps at most 63 characters of a dictionary name, QSPY 8.x 127 (QsDictionaries.sizeFor). */
const NAME_MAX = 63;
const NAME_MAX_8X = 127;

/** Both renderings of one key: QSPY's text, and what the fields carry. */
export interface QsKeyNames {
  readonly text: string;
  readonly field: string;
}

/** How many keys' renderings a dictionary remembers between changes. */
const NAMES_CACHE_MAX = 4096;

/**
 * Object, function, user-record and enum dictionary: key -> name, as QSPY keeps it
 * (a put of a known key replaces the name; new keys are ignored once `capacity - 1` are held).
 */
export class QsDictionary {
  private readonly names = new Map<QsKey, string>();
  /** Characters of a name kept (QsDictionaries.sizeFor). */
  nameMax = NAME_MAX;

  constructor(
    /** QSPY's table size; the QS version's qspy decides it (`QsDictionaries.sizeFor`). */
    public capacity: number,
    /** The key size QSPY renders unknown keys and decides about `NULL` with. */
    readonly keySize: number,
    /** Told of every change, where records' text depends on this dictionary. */
    private readonly content?: DictionaryContent,
  ) {}

  get size(): number {
    return this.names.size;
  }

  put(key: QsKey, name: string): void {
    const stored = name.length > this.nameMax ? name.slice(0, this.nameMax) : name;
    const known = this.names.get(key);
    // The same name again (a target sends its dictionaries anew) changes nothing.
    if (known === stored) return;
    if (known !== undefined || this.names.size < this.capacity - 1) {
      this.content?.change(key, 0, stored);
      this.names.set(key, stored);
      // A key's renderings depend on its own entry only: the others' stay.
      this.rendered.delete(key);
    }
  }

  /**
   * `get(key)` and `field(key, realSize)` together, from one lookup: records name the same
   * few objects and functions over and over, and dictionary entries change rarely.
   */
  renderings(key: QsKey, realSize: number): QsKeyNames {
    // The hit alone, so that it stays small enough to be inlined into every record's decoder.
    if (realSize === this.renderedSize) {
      const names = this.rendered.get(key);
      if (names !== undefined) return names;
    }
    return this.render(key, realSize);
  }

  /** `renderings` of a key not rendered yet for this pointer size. */
  private render(key: QsKey, realSize: number): QsKeyNames {
    if (realSize !== this.renderedSize) {
      this.rendered.clear();
      this.renderedSize = realSize;
    }
    const names = { text: this.get(key), field: this.field(key, realSize) };
    if (this.rendered.size >= NAMES_CACHE_MAX) this.rendered.clear();
    this.rendered.set(key, names);
    return names;
  }

  /** Renderings by key, for the target pointer size `renderedSize`; a key's are dropped when its entry changes. */
  private readonly rendered = new Map<QsKey, QsKeyNames>();
  private renderedSize = 0;

  /** The stored name, or undefined. */
  find(key: QsKey): string | undefined {
    return this.names.get(key);
  }

  /** QSPY's `Dictionary_get`: the name, `NULL` for key 0, or the unknown-key rendering. */
  get(key: QsKey): string {
    if (key === 0 && this.keySize >= 4) return 'NULL';
    const name = this.names.get(key);
    if (name !== undefined) return name;
    // Unknown keys repeat (a state without a dictionary entry): render each once.
    let text = this.unknownText.get(key);
    if (text === undefined) {
      text = renderUnknownKey(key, this.keySize);
      if (this.unknownText.size >= UNKNOWN_CACHE_MAX) this.unknownText.clear();
      this.unknownText.set(key, text);
    }
    return text;
  }

  /**
   * The name, or for an unknown key its address at the target's real pointer size (not QSPY's
   * command-line size): what the fields carry.
   */
  field(key: QsKey, realSize: number): string {
    const name = this.names.get(key);
    if (name !== undefined) return name;
    if (key === 0) return 'NULL';
    let text = this.unknownField.get(key);
    if (text === undefined || this.unknownFieldSize !== realSize) {
      if (this.unknownFieldSize !== realSize) this.unknownField.clear();
      this.unknownFieldSize = realSize;
      text = renderUnknownKey(key, realSize <= 4 ? 4 : 8);
      if (this.unknownField.size >= UNKNOWN_CACHE_MAX) this.unknownField.clear();
      this.unknownField.set(key, text);
    }
    return text;
  }

  private readonly unknownText = new Map<QsKey, string>();
  private readonly unknownField = new Map<QsKey, string>();
  private unknownFieldSize = 0;

  reset(): void {
    this.content?.reset();
    this.names.clear();
    this.rendered.clear();
  }

  /** The entries in key order, as QSPY keeps (and saves) them. */
  entries(): Array<[QsKey, string]> {
    const hi = (k: QsKey) => keyHi(k);
    const lo = (k: QsKey) => keyLo(k);
    return [...this.names].sort(([a], [b]) => hi(a) - hi(b) || lo(a) - lo(b));
  }

  toJSON(): JsonValue {
    return [...this.names].map(([k, v]) => [k, v]);
  }

  load(json: JsonValue): void {
    this.content?.unknown();
    this.names.clear();
    this.rendered.clear();
    for (const entry of json as [QsKey, string][]) this.names.set(entry[0], entry[1]);
  }
}

interface SigEntry {
  sig: number;
  obj: QsKey;
  name: string;
}

/**
 * The signal dictionary, keyed by (signal, object), with QSPY's exact storage and search:
 * entries sorted by signal (stable), a binary search whose first hit wins for generic
 * lookups, and object-specific/generic matching for the others (spec 7.2, 7.3, Q13).
 */
export class QsSigDictionary {
  /** Characters of a name kept (QsDictionaries.sizeFor). */
  nameMax = NAME_MAX;
  /** Slots as QSPY's array holds them; those past `entries` keep stale contents after a reset. */
  private sto: SigEntry[] = [];
  private entries = 0;

  constructor(
    /** QSPY's table size; the QS version's qspy decides it (`QsDictionaries.sizeFor`). */
    public capacity: number,
    /** Command-line object pointer size: how unknown signals are rendered. */
    readonly ptrSize: number,
    /** Told of every change, where records' text depends on this dictionary. */
    private readonly content?: DictionaryContent,
  ) {}

  get size(): number {
    return this.entries;
  }

  private sigAt(i: number): number {
    return i < this.sto.length ? this.sto[i].sig : 0;
  }

  private objAt(i: number): QsKey {
    return i < this.sto.length ? this.sto[i].obj : 0;
  }

  find(sig: number, obj: QsKey): number {
    let first = 0;
    let last = this.entries;
    while (first <= last) {
      const mid = (first + last) >> 1;
      const s = this.sigAt(mid);
      if (s === sig) {
        if (obj === 0) return mid;
        first = mid;
        do {
          const o = this.objAt(first);
          if (o === 0 || o === obj) return first;
          --first;
        } while (first >= 0 && this.sigAt(first) === sig);
        last = mid + 1;
        while (last < this.entries && this.sigAt(last) === sig) {
          const o = this.objAt(last);
          if (o === 0 || o === obj) return last;
          ++last;
        }
        return -1;
      }
      if (s > sig) last = mid - 1;
      else first = mid + 1;
    }
    return -1;
  }

  put(sig: number, obj: QsKey, name: string): void {
    const stored = name.length > this.nameMax ? name.slice(0, this.nameMax) : name;
    const idx = this.find(sig, obj);
    // The same entry again (a target sends its dictionaries anew) changes nothing.
    if (idx >= 0 && this.slot(idx).obj === obj && this.slot(idx).name === stored) return;
    this.forgetRecent();
    if (idx >= 0) {
      // A slot past the live entries (found only for signal 0, whose text is NULL) renders nothing.
      if (idx < this.entries) this.content?.change(idx, obj, stored);
      this.slot(idx).obj = obj;
      this.slot(idx).name = stored;
    } else if (this.entries < this.capacity - 1) {
      // Negative: an entry added, not a slot's replaced.
      this.content?.change(-1 - sig, obj, stored);
      const n = this.entries;
      const e = this.slot(n);
      e.sig = sig;
      e.obj = obj;
      e.name = stored;
      this.entries = n + 1;
      // QSPY appends, then sorts the live entries by signal with qsort (glibc's merge sort:
      // stable). They were sorted already, so that puts the new entry after every entry of a
      // signal not above its own: moved there, without sorting them all again.
      let at = n;
      while (at > 0 && this.sto[at - 1].sig > sig) {
        this.sto[at] = this.sto[at - 1];
        at--;
      }
      this.sto[at] = e;
    }
  }

  private slot(i: number): SigEntry {
    while (this.sto.length <= i) this.sto.push({ sig: 0, obj: 0, name: '' });
    return this.sto[i];
  }

  /**
   * The stored name, or undefined. A record names the same few (signal, object) pairs again and
   * again: the last four lookups are kept (and forgotten on every change), so that the common
   * case is a few comparisons, small enough to be inlined, instead of a binary search.
   */
  findName(sig: number, obj: QsKey): string | undefined {
    if (sig === this.recentSig0 && obj === this.recentObj0) return this.recentName0;
    if (sig === this.recentSig1 && obj === this.recentObj1) return this.recentName1;
    if (sig === this.recentSig2 && obj === this.recentObj2) return this.recentName2;
    if (sig === this.recentSig3 && obj === this.recentObj3) return this.recentName3;
    return this.lookUp(sig, obj);
  }

  private lookUp(sig: number, obj: QsKey): string | undefined {
    let name: string | undefined;
    if (sig === 0) name = 'NULL';
    else {
      const idx = this.find(sig, obj);
      name = idx >= 0 ? this.sto[idx].name : undefined;
    }
    switch (this.recentNext) {
      case 0:
        this.recentSig0 = sig;
        this.recentObj0 = obj;
        this.recentName0 = name;
        break;
      case 1:
        this.recentSig1 = sig;
        this.recentObj1 = obj;
        this.recentName1 = name;
        break;
      case 2:
        this.recentSig2 = sig;
        this.recentObj2 = obj;
        this.recentName2 = name;
        break;
      default:
        this.recentSig3 = sig;
        this.recentObj3 = obj;
        this.recentName3 = name;
    }
    this.recentNext = (this.recentNext + 1) & 3;
    return name;
  }

  // The recent lookups (signal -1: none).
  private recentSig0 = -1;
  private recentObj0: QsKey = 0;
  private recentName0: string | undefined;
  private recentSig1 = -1;
  private recentObj1: QsKey = 0;
  private recentName1: string | undefined;
  private recentSig2 = -1;
  private recentObj2: QsKey = 0;
  private recentName2: string | undefined;
  private recentSig3 = -1;
  private recentObj3: QsKey = 0;
  private recentName3: string | undefined;
  private recentNext = 0;

  /** On every change: the names found recently may be stale. */
  private forgetRecent(): void {
    this.recentSig0 = -1;
    this.recentSig1 = -1;
    this.recentSig2 = -1;
    this.recentSig3 = -1;
  }

  /** QSPY's `SigDictionary_get`: name, `NULL` for signal 0, or `%08d,Obj=0x...`. */
  get(sig: number, obj: QsKey): string {
    return this.findName(sig, obj) ?? this.unknown(sig, obj);
  }

  unknown(sig: number, obj: QsKey): string {
    const s = zeroPad(sig | 0, 8);
    return this.ptrSize <= 4 ? `${s},Obj=0x${hex8(keyLo(obj))}` : `${s},Obj=0x${hex16(keyHi(obj), keyLo(obj))}`;
  }

  reset(): void {
    this.forgetRecent();
    // What stays in the slots past the live entries is found only for signal 0, whose text is NULL.
    this.content?.reset();
    for (const e of this.sto) e.sig = 0;
    this.entries = 0;
  }

  /** The live entries in QSPY's storage order (by signal). */
  list(): Array<{ sig: number; obj: QsKey; name: string }> {
    return this.sto.slice(0, this.entries).map((e) => ({ ...e }));
  }

  toJSON(): JsonValue {
    return { entries: this.entries, sto: this.sto.map((e) => [e.sig, e.obj, e.name]) };
  }

  load(json: JsonValue): void {
    this.forgetRecent();
    this.content?.unknown();
    const j = json as { entries: number; sto: [number, QsKey, string][] };
    this.entries = j.entries;
    this.sto = j.sto.map(([sig, obj, name]) => ({ sig, obj, name }));
  }
}

/**
 * QSPY's dictionary tables: qspy 7.4 holds 256 objects, 512 functions and signals, and user
 * records 70..128 (59); qspy 8.1 holds 2048, 8192 and 8192, and user records 100..128 (29).
 */
const QSPY_7X_TABLE_SIZES = { obj: 256, fun: 512, sig: 512, usr: 59 } as const;
const QSPY_8X_TABLE_SIZES = { obj: 2048, fun: 8192, sig: 8192, usr: 29 } as const;

/** Every dictionary of one link session (spec 7). */
export class QsDictionaries {
  readonly obj: QsDictionary;
  readonly fun: QsDictionary;
  readonly usr: QsDictionary;
  readonly sig: QsSigDictionary;
  /** Eight enum groups; not cleared by a target reset (Q9). */
  readonly enums: QsDictionary[];

  /**
   * @param states told of every change of the dictionaries that records' text names things with
   * (objects, functions, signals, user records)
   */
  constructor(objKeySize: number, funKeySize: number, version = 700, states?: RenderStates) {
    this.obj = new QsDictionary(0, objKeySize, states?.obj);
    this.fun = new QsDictionary(0, funKeySize, states?.fun);
    this.usr = new QsDictionary(0, 1, states?.usr);
    this.sig = new QsSigDictionary(0, objKeySize, states?.sig);
    this.enums = Array.from({ length: 8 }, () => new QsDictionary(256, 1));
    this.sizeFor(version);
  }

  /** Takes the table sizes and name length of the qspy that prints a target of this QS version. */
  sizeFor(version: number): void {
    const sizes = version >= 800 ? QSPY_8X_TABLE_SIZES : QSPY_7X_TABLE_SIZES;
    this.obj.capacity = sizes.obj;
    this.fun.capacity = sizes.fun;
    this.usr.capacity = sizes.usr;
    this.sig.capacity = sizes.sig;
    const nameMax = version >= 800 ? NAME_MAX_8X : NAME_MAX;
    for (const d of [this.obj, this.fun, this.usr, this.sig, ...this.enums]) d.nameMax = nameMax;
  }

  /** QSPY's reset of all dictionaries: enums stay; user record 124 is pre-filled (Q9). */
  resetAll(): void {
    this.obj.reset();
    this.fun.reset();
    this.usr.reset();
    this.sig.reset();
    this.usr.put(124, 'QUTEST_ON_POST');
  }

  toJSON(): JsonValue {
    return {
      obj: this.obj.toJSON(),
      fun: this.fun.toJSON(),
      usr: this.usr.toJSON(),
      sig: this.sig.toJSON(),
      enums: this.enums.map((e) => e.toJSON()),
    };
  }

  load(json: JsonValue): void {
    const j = json as Record<string, JsonValue>;
    this.obj.load(j.obj);
    this.fun.load(j.fun);
    this.usr.load(j.usr);
    this.sig.load(j.sig);
    (j.enums as JsonValue[]).forEach((e, i) => {
      this.enums[i].load(e);
    });
  }
}
