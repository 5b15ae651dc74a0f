import type { DecodedRecord, JsonValue } from '@tracehub/contracts';
import type { QsDecoderOptions, QsTargetConfig } from './config.js';
import { configFromOptions, sameBuild } from './config.js';
import { QS_8X_RECORD_NAMES, QS_RECORD_NAMES, QsDecoderRecordId } from './constants.js';
import { QsDictionaries, type QsKey, type QsKeyNames } from './dictionaries.js';
import { loadDictionaryFile, type QsDictionaryFile } from './dictionary-file.js';
import { NumText, PieceMemo, spacePad, TimestampText, zeroPad } from './format.js';
import type { LineParts } from './line-parts.js';
import { PayloadReader } from './reader.js';
import type { Fields, QsAddressing, RecordContext, RecordParser } from './record-context.js';
import { RECORD_PARSERS } from './record-parsers.js';
import { RenderStates } from './render-states.js';
import { QsUserElementsDecoder } from './user-record.js';

/**
 * The names of the predefined records in arrays of the decoder's own, not frozen as the exported
 * ones are: TurboFan does not load a frozen array's elements inline (PERFORMANCE.md, "No frozen
 * array on the hot path").
 */
const RECORD_NAMES_7X: readonly string[] = [...QS_RECORD_NAMES];
const RECORD_NAMES_8X: readonly string[] = [...QS_8X_RECORD_NAMES];

const TIM = new NumText(',Tim=', '');
const INT = new NumText(',Int=', '');
const NO_NAMES: QsKeyNames = { text: '', field: '' };
/** How many steps between consecutive timestamps are kept as bigints (see bigTs). */
const SMALL_BIGINT_COUNT = 4096;
/**
 * 0n .. 4095n, made by the first decoder that needs bigint timestamps rather than at start-up:
 * `tracehub decode`'s text needs none (PERFORMANCE.md, "Warm-up").
 */
let smallBigints: readonly bigint[] | undefined;
function makeSmallBigints(): readonly bigint[] {
  smallBigints = Array.from({ length: SMALL_BIGINT_COUNT }, (_, i) => BigInt(i));
  return smallBigints;
}

/**
 * Decodes the payload of one good frame into a record with QSPY's text (spec 4-9): user records
 * here, predefined ones by their parser in `RECORD_PARSERS`, to which the decoder is the
 * `RecordContext` (the reader, the configuration, the names, the line being built). Holds what
 * outlives a record: the target configuration and the dictionaries.
 */
export class QsRecordDecoder implements RecordContext {
  /** Sizes in use: the options until a target info arrives, then the target's. */
  config: QsTargetConfig;
  readonly dicts: QsDictionaries;
  /** True once a target info was received (QSPY: the stored build year is nonzero). */
  targetInfoSeen = false;
  /** Set by a reset target info: the host's QS-RX sequence counter restarts. */
  hostSeqReset = false;
  // What the parsers read (RecordContext).
  readonly r = new PayloadReader();
  readonly ts = new TimestampText();
  readonly counterText = new TimestampText();
  private readonly userElements = new QsUserElementsDecoder();
  /** Names of the predefined ids: QSPY 7.4's, or with a QS 8.x target, 8.x's (id 81). */
  names: readonly string[] = RECORD_NAMES_7X;
  /** See userBase: a field, as every record reads it. */
  private userBaseId = 100;
  /** The last user record name, and the same with its leading space. */
  private userName = '';
  private userNameSpaced = ' ';

  // Objects and functions are looked up once per key and record (both renderings at once);
  // the text's rendering of a signal reuses the fields' lookup through a one-entry memo.
  // Memos hold within one record only: the next may follow a dictionary change.
  private memoObjKey: QsKey = -1;
  private memoObj: QsKeyNames = NO_NAMES;
  private memoFunKey: QsKey = -1;
  private memoFun: QsKeyNames = NO_NAMES;
  private memoSig = -1;
  private memoSigObj: QsKey = -1;
  private memoSigName: string | undefined;

  // The last line tails of the most frequent records (see PieceMemo).
  readonly dispatchText = new PieceMemo(this.copiesEveryLine);
  readonly activePostText = new PieceMemo(this.copiesEveryLine);
  readonly timeEvtText = new PieceMemo(this.copiesEveryLine);

  /** Counts the configurations taken (which record layouts the text-only decoder's kept frames have). */
  protected configChanges = 0;
  /** The state of the dictionaries of names and the configuration (the text-only decoder's kept lines hold for one). */
  protected readonly renderStates = new RenderStates();

  /** The parser of each predefined record id (record-parsers.ts), read as a field of the class. */
  private static readonly parsers: readonly RecordParser[] = RECORD_PARSERS;

  /** The last timestamp, and its bigint (see bigTs). */
  private lastTs = -1;
  private lastTsBig = -1n;

  /**
   * @param dictionaryFile a qspy `.dic` to work with as `qspy -d <file>` does: its
   * configuration and names from the start, and its names again after every target info of
   * the same build (another build: the dictionaries are discarded, qspy's "mismatch").
   */
  constructor(
    options: Required<QsDecoderOptions>,
    private readonly dictionaryFile?: QsDictionaryFile,
  ) {
    const config = configFromOptions(options);
    this.config = config;
    this.configure(config);
    // Key sizes come from the command-line sizes and never change (spec 4.3, Q2).
    this.dicts = new QsDictionaries(options.objPtrSize, options.funPtrSize, config.version, this.renderStates);
    if (dictionaryFile) {
      this.configure({
        ...dictionaryFile.config,
        bigEndian: config.bigEndian,
        build: [...dictionaryFile.config.build],
      });
      loadDictionaryFile(this.dicts, dictionaryFile);
    }
  }

  /** Decodes with `config` from now on: its sizes, and the record names and user base of its version. */
  private configure(config: QsTargetConfig): void {
    this.configChanges++;
    // All of it: any field may change how some record reads or prints.
    this.renderStates.configure(JSON.stringify(config));
    this.config = config;
    this.names = config.version >= 800 ? RECORD_NAMES_8X : RECORD_NAMES_7X;
    this.userBaseId = config.version < 660 ? 70 : 100;
    // Undefined only while the constructor has not made them yet (it sizes them itself).
    this.dicts?.sizeFor(config.version);
  }

  takeTargetConfig(next: QsTargetConfig, reset: boolean): boolean {
    if (next.version >= 800) return this.takeTargetConfig8x(next, reset);
    const prev = this.config;
    const differs = !sameBuild(prev, next) || prev.bigEndian !== next.bigEndian;
    // QSPY knows a target info came before by the stored build year, zeroed at start-up.
    const mismatch = differs && prev.build[5] !== 0;
    this.configure(next);
    this.targetInfoSeen = true;
    if (mismatch) this.dicts.resetAll();
    if (reset) {
      this.dicts.resetAll();
      this.hostSeqReset = true;
    }
    this.reloadDictionaryFile();
    return mismatch;
  }

  /**
   * A QP 8.x target's info, as qspy 8.1 takes it: a reset discards the dictionaries silently;
   * otherwise a change (of any size, the version, release date, framework, byte order or build)
   * discards them with a notice, but only when the info names a framework (qspy tests the new
   * framework field where 7.4 tested for an earlier target info). The dictionary file is read
   * again only then.
   */
  private takeTargetConfig8x(next: QsTargetConfig, reset: boolean): boolean {
    const prev = this.config;
    const differs =
      !sameBuild(prev, next) ||
      prev.bigEndian !== next.bigEndian ||
      (prev.releaseDate ?? 0) !== (next.releaseDate ?? 0) ||
      (prev.framework ?? 0) !== (next.framework ?? 0);
    const changed = !reset && differs && (next.framework ?? 0) !== 0;
    this.configure(next);
    this.targetInfoSeen = true;
    if (reset) this.hostSeqReset = true;
    if (reset || changed) {
      this.dicts.resetAll();
      this.reloadDictionaryFile();
    }
    return changed;
  }

  /** After a target info: the dictionary file's names again when it is of this build, else none. */
  private reloadDictionaryFile(): void {
    const file = this.dictionaryFile;
    if (!file) return;
    if (sameBuild(file.config, this.config)) loadDictionaryFile(this.dicts, file);
    else this.dicts.resetAll();
  }

  /** First id of the application-specific records (70 before QS 6.6). */
  get userBase(): number {
    return this.userBaseId;
  }

  /** Name of a record id as QSPY's length errors give it (`USER+%3d` for user records). */
  recordName(id: number): string {
    return id < this.userBase ? this.names[id] : `USER+${spacePad(String(id - this.userBase), 3)}`;
  }

  /** Decodes the frame `buf[start..start+len)`: seq, id, payload, checksum. `raw` is stored as given. */
  decode(buf: Uint8Array, start: number, len: number, raw: Uint8Array): DecodedRecord {
    const id = buf[start + 1];
    const r = this.r;
    r.reset(buf, start + 2, len - 3);
    // Memos hold within one record only: the next may follow a dictionary change.
    this.memoObjKey = -1;
    this.memoFunKey = -1;
    this.memoSig = -1;
    if (id >= this.userBaseId) return this.user(id, raw);
    return this.predefined(id, raw);
  }

  private user(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const t = r.u(this.config.timeSize);
    const name = this.userNameOf(id);
    if (name !== this.userName) {
      this.userName = name;
      this.userNameSpaced = ` ${name}`;
    }
    const written = this.userLine(id, name, this.userNameSpaced, t, raw);
    if (written !== null) return written;
    const head = this.ts.of(t) + this.userNameSpaced;
    const timeErrors = r.errors;
    const u = this.userElements;
    const body = u.decode(r, head, this.config, this.dicts);
    return {
      kind: 'record',
      type: id,
      name,
      targetTs: this.targetTsOf(t),
      fields: this.userFields(u),
      text: timeErrors === '' ? body : timeErrors + body,
      raw,
    };
  }

  /** A user record's name: its entry in the user dictionary, else `USER+nnn`. */
  protected userNameOf(id: number): string {
    return this.dicts.usr.find(id) ?? `USER+${zeroPad(id - this.userBase, 3)}`;
  }

  objNames(key: QsKey): QsKeyNames {
    if (key === this.memoObjKey) return this.memoObj;
    const names = this.dicts.obj.renderings(key, this.config.objPtrSize);
    this.memoObjKey = key;
    this.memoObj = names;
    return names;
  }

  funNames(key: QsKey): QsKeyNames {
    if (key === this.memoFunKey) return this.memoFun;
    const names = this.dicts.fun.renderings(key, this.config.funPtrSize);
    this.memoFunKey = key;
    this.memoFun = names;
    return names;
  }

  obj(key: QsKey): string {
    return this.objNames(key).text;
  }

  fun(key: QsKey): string {
    return this.funNames(key).text;
  }

  /**
   * QSPY renders unknown keys into one buffer per dictionary and evaluates the arguments last
   * to first, so when both objects miss, both show the first object's rendering.
   */
  secondObj(first: QsKey, second: QsKey): string {
    return this.misses(second) && this.misses(first) ? this.obj(first) : this.obj(second);
  }

  /** Whether QSPY renders this object from its not-found buffer: unknown, and not `NULL`. */
  private misses(key: QsKey): boolean {
    const d = this.dicts.obj;
    return !(key === 0 && d.keySize >= 4) && d.find(key) === undefined;
  }

  objF(key: QsKey): string {
    return this.objNames(key).field;
  }

  funF(key: QsKey): string {
    return this.funNames(key).field;
  }

  /** Kept for `sig`: the text's rendering of a signal reuses the fields' lookup. */
  sigF(sig: number, obj: QsKey): string {
    const name = this.dicts.sig.findName(sig, obj);
    this.memoSig = sig;
    this.memoSigObj = obj;
    this.memoSigName = name;
    return name ?? String(sig);
  }

  sig(sig: number, obj: QsKey): string {
    if (sig === this.memoSig && obj === this.memoSigObj) {
      return this.memoSigName ?? this.dicts.sig.unknown(sig, obj);
    }
    return this.dicts.sig.get(sig, obj);
  }

  done(
    id: number,
    kind: DecodedRecord['kind'],
    t: number | null,
    text: string,
    fields: Fields,
    raw: Uint8Array,
    qs?: QsAddressing,
  ): DecodedRecord {
    const r = this.r;
    if (r.remaining !== 0) return this.lengthError(id, raw);
    // Two literals with fixed shapes (qs last, as before) instead of adding `qs` afterwards:
    // no hidden-class transition per record, and consumers see two shapes only.
    const targetTs = t === null ? null : this.targetTsOf(t);
    const name = this.names[id];
    if (qs === undefined) return { kind, type: id, name, targetTs, fields, text, raw };
    return { kind, type: id, name, targetTs, fields, text, raw, qs };
  }

  /**
   * Whether the caller copies every record's text (QsTextRecordDecoder: yes), so that the line
   * tails kept for reuse are worth making flat. Read while the fields above are made.
   */
  protected get copiesEveryLine(): boolean {
    return false;
  }

  /**
   * Never here: the string formatter keeps no lines (QsTextRecordDecoder does). Among the
   * values are the record id where the parts do not tell it.
   */
  lineAgain(
    _t: number,
    _parts: LineParts,
    _k0: QsKey,
    _k1: QsKey,
    _k2: QsKey,
    _k3: number,
    _k4: number,
    _k5: number,
  ): boolean {
    return false;
  }

  /**
   * Yes here (QsTextRecordDecoder: no). Where the compiler could not prove them unused, the
   * objects of every record were made anyway: most of what `tracehub decode` allocated.
   */
  get fieldsWanted(): boolean {
    return true;
  }

  /**
   * A record's line from its timestamp and the line's tail kept in `m` (QsTextRecordDecoder
   * writing bytes: the line is written, and its text is '').
   */
  memoLine(t: number, m: PieceMemo): string {
    return this.ts.line(t, m.text);
  }

  /** A record's line from its timestamp and the rest (QsTextRecordDecoder writing bytes: written, and '' returned). */
  tsLine(t: number, rest: string): string {
    return this.ts.of(t) + rest;
  }

  /**
   * A record's line: its timestamp, then `parts` around the values (QsTextRecordDecoder writing
   * bytes: written, and '' returned).
   */
  partsLine(t: number, parts: LineParts, v0: string, v1: string, v2 = '', v3 = '', v4 = ''): string {
    return this.ts.line(t, parts.join(v0, v1, v2, v3, v4));
  }

  /**
   * A line with no timestamp digits (its parts begin with `===RTC===> ` or with blanks), as
   * `partsLine` writes.
   */
  plainLine(parts: LineParts, v0: string, v1: string, v2 = '', v3 = ''): string {
    return parts.join(v0, v1, v2, v3, '');
  }

  /** A time event's line: `memoLine` with the counters after the kept part. */
  timeEvtLine(t: number, m: PieceMemo, tim: number, int: number): string {
    return this.ts.line(t, m.text + TIM.of(tim) + INT.of(int));
  }

  /**
   * A user record written as bytes, when the decoder writes them, its timestamp was read whole
   * and its elements are of the kinds that can be (QsTextRecordDecoder); else null, and the
   * record is decoded as ever from where the reader stands (after the timestamp).
   */
  protected userLine(
    _id: number,
    _name: string,
    _nameSpaced: string,
    _t: number,
    _raw: Uint8Array,
  ): DecodedRecord | null {
    return null;
  }

  /** A record's `targetTs` from its timestamp (QsTextRecordDecoder: none). */
  protected targetTsOf(t: number): bigint | null {
    return this.bigTs(t);
  }

  /** A user record's `fields`: its elements (QsTextRecordDecoder: none). */
  protected userFields(u: QsUserElementsDecoder): Fields {
    return u.elements() as unknown as Fields;
  }

  /**
   * The timestamp as a bigint; consecutive records often share one (bigints are immutable).
   * `BigInt(number)` is a call into the runtime, several times the cost of adding a small
   * bigint from a table, so a timestamp a little after the last one is made by addition.
   */
  private bigTs(t: number): bigint {
    const d = t - this.lastTs;
    if (d !== 0) {
      if (d > 0 && d < SMALL_BIGINT_COUNT) {
        this.lastTsBig += (smallBigints ?? makeSmallBigints())[d] as bigint;
      } else {
        this.lastTsBig = BigInt(t);
      }
      this.lastTs = t;
    }
    return this.lastTsBig;
  }

  lengthError(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const name = this.recordName(id);
    const unused = r.remaining > 0;
    const n = unused ? r.remaining : -r.remaining;
    const message = `${n} bytes ${unused ? 'unused' : 'needed'} in ${name}: the layout does not match this target's configuration`;
    return {
      kind: 'error',
      type: QsDecoderRecordId.QS_RECORD_LENGTH,
      name: 'QS_RECORD_LENGTH',
      targetTs: null,
      // Literals, not a computed key: an object built with one goes through the runtime.
      fields: unused
        ? { recId: id, record: name, unused: n, message }
        : { recId: id, record: name, needed: n, message },
      text: `${r.errors}   <COMMS> ERROR    ${n} bytes ${unused ? 'unused' : 'needed'} in Rec=${name}`,
      raw,
    };
  }

  /** A predefined record, by its parser in the table (record-parsers.ts says why a table). */
  private predefined(id: number, raw: Uint8Array): DecodedRecord {
    return (QsRecordDecoder.parsers[id] as RecordParser)(this, this.r, this.config, id, raw);
  }

  snapshot(): JsonValue {
    return {
      config: { ...this.config, build: [...this.config.build] },
      targetInfoSeen: this.targetInfoSeen,
      dicts: this.dicts.toJSON(),
    };
  }

  restore(json: JsonValue): void {
    const j = json as unknown as { config: QsTargetConfig; targetInfoSeen: boolean; dicts: JsonValue };
    this.configure({ ...j.config, build: [...j.config.build] });
    this.targetInfoSeen = j.targetInfoSeen;
    this.dicts.load(j.dicts);
  }
}
