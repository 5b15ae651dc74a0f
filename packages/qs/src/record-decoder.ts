import type { DecodedRecord, JsonValue } from '@tracehub/contracts';
import type { QsDecoderOptions, QsTargetConfig } from './config.js';
import { configFromOptions } from './config.js';
import { QsRecordId as Id, QS_8X_RECORD_NAMES, QS_RECORD_NAMES, QsDecoderRecordId } from './constants.js';
import { QsDictionaries, type QsKey, type QsKeyNames } from './dictionaries.js';
import { loadDictionaryFile, type QsDictionaryFile } from './dictionary-file.js';
import { dec, hex8, hex16, NumText, PairText, PieceMemo, spacePad, TimestampText, zeroPad } from './format.js';
import { LineParts } from './line-parts.js';
import { PayloadReader } from './reader.js';
import {
  parsePeekData,
  parseQueryData,
  parseRxStatus,
  parseTargetDone,
  parseTestPaused,
  parseTestProbe,
} from './test-records.js';
import { QsUserElementsDecoder } from './user-record.js';

/**
 * The names of the predefined records in arrays of the decoder's own, not frozen as the exported
 * ones are: TurboFan does not load a frozen array's elements inline, and `names[id]` of every
 * record went through V8's generic keyed load (1.1-1.5% of the CPU samples of a run over a DPP
 * capture, 0.1-0.4% with these and the reader's buffer stored only when it changes; 3 runs each).
 */
const RECORD_NAMES_7X: readonly string[] = [...QS_RECORD_NAMES];
const RECORD_NAMES_8X: readonly string[] = [...QS_8X_RECORD_NAMES];

const RTC = '===RTC===> ';
/** The fields of a record decoded for its text only (see `fieldsWanted`). */
export const NO_FIELDS: Fields = Object.freeze({});
const NO_TS = '           ';
const POOL_REF = new PairText(',Pool=', ',Ref=', '>');
const QUE_MIN = new PairText(',Que<Free=', ',Min=', '>');
const QUE_MAR = new PairText(',Que<Free=', ',Mar=', '>');
const QUE_FREE = new NumText(',Que<Free=', '>');
const TE_ARM = new NumText(' TE', '-Arm  Obj=');
const TE_DISARM = new NumText(' TE', '-Dis  Obj=');
const TE_CTR = new NumText(' TE', '-Ctr  Obj=');
const TIM = new NumText(',Tim=', '');
const INT = new NumText(',Int=', '');
const NO_NAMES: QsKeyNames = { text: '', field: '' };
// The lines of the most frequent records as parts around their values (LineParts).
const ST_ENTRY = new LineParts(`${RTC}St-Entry Obj=`, ',State=');
const ST_EXIT = new LineParts(`${RTC}St-Exit  Obj=`, ',State=');
const UNHANDLED = new LineParts(`${RTC}St-Unhnd Obj=`, ',Sig=', ',State=');
const INIT_TRAN = new LineParts(' Init===> Obj=', ',State=');
const DISPATCH = new LineParts(' Disp===> Obj=', ',Sig=', ',State=');
const INTERN_TRAN = new LineParts(' =>Intern Obj=', ',Sig=', ',State=');
const IGNORED = new LineParts(' =>Ignore Obj=', ',Sig=', ',State=');
const ACTIVE_POST = new LineParts(' AO-Post  Sdr=', ',Obj=', ',Evt<Sig=');
const ACTIVE_POST_ATTEMPT = new LineParts(' AO-PostA Sdr=', ',Obj=', ',Evt<Sig=');
/** A time event's arm, disarm or counter line, its tag (` TE0-Arm  Obj=`) the first value. */
const TIME_EVT = new LineParts('', '', ',AO=');
const TRAN = new LineParts(' ===>Tran Obj=', ',Sig=', ',State=', '->');
const DEFER = new LineParts(' AO-Defer Obj=', ',Que=', ',Evt<Sig=');
const RECALL = new LineParts(' AO-RCall Obj=', ',Que=', ',Evt<Sig=');
const DEFER_ATTEMPT = new LineParts(' AO-DefrA Obj=', ',Que=', ',Evt<Sig=');
const SUBSCRIBE = new LineParts(' AO-Subsc Obj=', ',Sig=');
const UNSUBSCRIBE = new LineParts(' AO-Unsub Obj=', ',Sig=');
const AO_GET = new LineParts(' AO-Get   Obj=', ',Evt<Sig=');
const EQ_GET = new LineParts(' EQ-Get   Obj=', ',Evt<Sig=');
const AO_GET_LAST = new LineParts(' AO-GetL  Obj=', ',Evt<Sig=');
const EQ_GET_LAST = new LineParts(' EQ-GetL  Obj=', ',Evt<Sig=');
const NEW = new LineParts(' QF-New   Sig=', ',Size=');
const NEW_ATTEMPT = new LineParts(' QF-NewA  Sig=', ',Size=');
const POOL_GET = new LineParts(' MP-Get   Obj=', ',Free=', ',Min=');
const POOL_GET_ATTEMPT = new LineParts(' MP-GetA  Obj=', ',Free=', ',Mar=');
const POOL_PUT = new LineParts(' MP-Put   Obj=', ',Free=');
const PUBLISH = new LineParts(' QF-Pub   Sdr=', ',Evt<Sig=');
const NEW_REF = new LineParts(' QF-NewRf Evt<Sig=');
const GC_ATTEMPT = new LineParts(' QF-gcA   Evt<Sig=');
const GC = new LineParts(' QF-gc    Evt<Sig=');
const DELETE_REF = new LineParts(' QF-DelRf Evt<Sig=');
const TE_DISARM_ATTEMPT = new LineParts(' TE', '-DisA Obj=', ',AO=');
const TE_POST = new LineParts(' TE', '-Post Obj=', ',Sig=', ',AO=');
const TE_AUTO_DISARM = new LineParts(`${NO_TS}TE`, '-ADis Obj=', ',AO=');
const TICK = new LineParts(`${NO_TS}Tick<`, '>  Ctr=');
const SIG_DICT = new LineParts(`${NO_TS}Sig-Dict `, ',Obj=0x', '->');
const OBJ_DICT = new LineParts(`${NO_TS}Obj-Dict 0x`, '->');
const FUN_DICT = new LineParts(`${NO_TS}Fun-Dict 0x`, '->');
const USR_DICT = new LineParts(`${NO_TS}Usr-Dict `, '->');
/** How many steps between consecutive timestamps are kept as bigints (see bigTs). */
const SMALL_BIGINT_COUNT = 4096;
/**
 * 0n .. 4095n, made by the first decoder that needs bigint timestamps: making them took 5 ms,
 * a part of the start-up of `tracehub decode`, whose text needs none.
 */
let smallBigints: readonly bigint[] | undefined;
function makeSmallBigints(): readonly bigint[] {
  smallBigints = Array.from({ length: SMALL_BIGINT_COUNT }, (_, i) => BigInt(i));
  return smallBigints;
}

/** A record's fields, as its parser builds them. */
export type Fields = Record<string, unknown>;
type QsAddressing = NonNullable<DecodedRecord['qs']>;
/** A parser of one predefined record kind, called with the decoder as `this`. */
type RecordParser = (this: QsRecordDecoder, id: number, raw: Uint8Array) => DecodedRecord;

/** A parser of another module, `(decoder, id, raw)`, as a RecordParser (the decoder as `this`). */
function asRecordParser(parse: (d: QsRecordDecoder, id: number, raw: Uint8Array) => DecodedRecord): RecordParser {
  return function (this: QsRecordDecoder, id: number, raw: Uint8Array) {
    return parse(this, id, raw);
  };
}
// Before the class: its table of parsers (a static field) takes these when the class is made.
const testPaused = asRecordParser(parseTestPaused);
const testProbe = asRecordParser(parseTestProbe);
const targetDone = asRecordParser(parseTargetDone);
const rxStatus = asRecordParser(parseRxStatus);
const peekData = asRecordParser(parsePeekData);
const queryData = asRecordParser(parseQueryData);

/**
 * Decodes the payload of one good frame into a record with QSPY's text (spec 4-9).
 * Holds what outlives a record: the target configuration and the dictionaries.
 */
export class QsRecordDecoder {
  /** Sizes in use: the options until a target info arrives, then the target's. */
  config: QsTargetConfig;
  readonly dicts: QsDictionaries;
  /** True once a target info was received (QSPY: the stored build year is nonzero). */
  targetInfoSeen = false;
  /** Set by a reset target info: the host's QS-RX sequence counter restarts. */
  hostSeqReset = false;
  /** @internal The reader of the record being decoded. */
  readonly r = new PayloadReader();
  /** @internal QSPY's `%010u` of the timestamps, and of the tick counter (kept apart: they interleave). */
  readonly ts = new TimestampText();
  private readonly counterText = new TimestampText();
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
  private readonly dispatchText = new PieceMemo(this.copiesEveryLine);
  private readonly activePostText = new PieceMemo(this.copiesEveryLine);
  private readonly timeEvtText = new PieceMemo(this.copiesEveryLine);

  /** The parser of each predefined record id (see predefined): one table for every decoder. */
  private static readonly parsers: readonly RecordParser[] = Array.from({ length: 256 }, (_, id) =>
    QsRecordDecoder.prototype.parserOf(id),
  );

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
    this.dicts = new QsDictionaries(options.objPtrSize, options.funPtrSize);
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
    this.config = config;
    this.names = config.version >= 800 ? RECORD_NAMES_8X : RECORD_NAMES_7X;
    this.userBaseId = config.version < 660 ? 70 : 100;
  }

  /** After a target info: the dictionary file's names again when it is of this build, else none. */
  private reloadDictionaryFile(): void {
    const file = this.dictionaryFile;
    if (!file) return;
    const c = this.config;
    const f = file.config;
    const same =
      f.version === c.version &&
      f.objPtrSize === c.objPtrSize &&
      f.funPtrSize === c.funPtrSize &&
      f.timeSize === c.timeSize &&
      f.sigSize === c.sigSize &&
      f.eventSize === c.eventSize &&
      f.queueCtrSize === c.queueCtrSize &&
      f.poolCtrSize === c.poolCtrSize &&
      f.poolBlkSize === c.poolBlkSize &&
      f.teCtrSize === c.teCtrSize &&
      f.build.every((v, i) => v === c.build[i]);
    if (same) loadDictionaryFile(this.dicts, file);
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
    const dictName = this.dicts.usr.find(id);
    const name = dictName ?? `USER+${zeroPad(id - this.userBase, 3)}`;
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

  private objNames(key: QsKey): QsKeyNames {
    if (key === this.memoObjKey) return this.memoObj;
    const names = this.dicts.obj.renderings(key, this.config.objPtrSize);
    this.memoObjKey = key;
    this.memoObj = names;
    return names;
  }

  private funNames(key: QsKey): QsKeyNames {
    if (key === this.memoFunKey) return this.memoFun;
    const names = this.dicts.fun.renderings(key, this.config.funPtrSize);
    this.memoFunKey = key;
    this.memoFun = names;
    return names;
  }

  /** An object as QSPY's text shows it. */
  /** @internal */
  obj(key: QsKey): string {
    return this.objNames(key).text;
  }

  /** @internal */
  fun(key: QsKey): string {
    return this.funNames(key).text;
  }

  /**
   * The second of two objects QSPY prints in one call (AO-Defer/RCall/RCllA `Que=`): unknown
   * keys are rendered into one buffer per dictionary and the arguments are evaluated last to
   * first, so when both miss, both show the first object's rendering.
   */
  private secondObj(first: QsKey, second: QsKey): string {
    return this.misses(second) && this.misses(first) ? this.obj(first) : this.obj(second);
  }

  /** Whether QSPY renders this object from its not-found buffer: unknown, and not `NULL`. */
  private misses(key: QsKey): boolean {
    const d = this.dicts.obj;
    return !(key === 0 && d.keySize >= 4) && d.find(key) === undefined;
  }

  /** An object as the fields give it: its name, or its address at the target's real size. */
  /** @internal */
  objF(key: QsKey): string {
    return this.objNames(key).field;
  }

  /** @internal */
  funF(key: QsKey): string {
    return this.funNames(key).field;
  }

  /** A signal as the fields give it: its name, or its number. */
  /** @internal */
  sigF(sig: number, obj: QsKey): string {
    const name = this.dicts.sig.findName(sig, obj);
    this.memoSig = sig;
    this.memoSigObj = obj;
    this.memoSigName = name;
    return name ?? String(sig);
  }

  /** A signal as QSPY's text shows it. */
  /** @internal */
  sig(sig: number, obj: QsKey): string {
    if (sig === this.memoSig && obj === this.memoSigObj) {
      return this.memoSigName ?? this.dicts.sig.unknown(sig, obj);
    }
    return this.dicts.sig.get(sig, obj);
  }

  /** The record when the payload fitted its layout, else QSPY's length error (spec 3.1). */
  /** @internal */
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

  /** Counts the configurations taken (see `lineAgain`). */
  protected configChanges = 0;

  /**
   * Whether the line of this record was written again from the bytes it had the last time it
   * came with the same values (QsTextRecordDecoder, which keeps recent lines; the string
   * formatter keeps none). `parts` and the raw values `k0`..`k5` (addresses, signals, counters,
   * and the record id where the parts do not tell it) are everything the line shows but its
   * timestamp `t` (-1: a line without one), given the dictionaries and the configuration. A
   * parser asks before it looks its values up: on true only `done` is left.
   */
  protected lineAgain(
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
   * Whether records carry their fields and addressing (QsTextRecordDecoder: no, and the parsers
   * make neither). Where the compiler could not prove them unused, the objects of every record
   * were made anyway: a hundred bytes a record, most of what `tracehub decode` allocated.
   */
  protected get fieldsWanted(): boolean {
    return true;
  }

  /**
   * A record's line from its timestamp and the line's tail kept in `m` (QsTextRecordDecoder
   * writing bytes: the line is written, and its text is '').
   */
  protected memoLine(t: number, m: PieceMemo): string {
    return this.ts.line(t, m.text);
  }

  /** A record's line from its timestamp and the rest (QsTextRecordDecoder writing bytes: written, and '' returned). */
  protected tsLine(t: number, rest: string): string {
    return this.ts.of(t) + rest;
  }

  /**
   * A record's line: its timestamp, then `parts` around the values (QsTextRecordDecoder writing
   * bytes: written, and '' returned).
   */
  protected partsLine(t: number, parts: LineParts, v0: string, v1: string, v2 = '', v3 = '', v4 = ''): string {
    return this.ts.line(t, parts.join(v0, v1, v2, v3, v4));
  }

  /**
   * A line with no timestamp digits (its parts begin with `===RTC===> ` or with blanks), as
   * `partsLine` writes.
   */
  protected plainLine(parts: LineParts, v0: string, v1: string, v2 = '', v3 = ''): string {
    return parts.join(v0, v1, v2, v3, '');
  }

  /** A time event's line: `memoLine` with the counters after the kept part. */
  protected timeEvtLine(t: number, m: PieceMemo, tim: number, int: number): string {
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

  protected lengthError(id: number, raw: Uint8Array): DecodedRecord {
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

  /**
   * A predefined record, by its parser in a table rather than through the switch of `parserOf`:
   * V8 inlined into the switch's function the parsers it had seen called from it, and compiled
   * it again and again as a capture brought new kinds of records. Through the table each parser
   * is compiled on its own, once: the fixtures repeated (60 kinds of records) decoded 4% faster
   * (11 alternated runs), the 37 MB bench capture and a DPP capture 1% faster.
   */
  private predefined(id: number, raw: Uint8Array): DecodedRecord {
    return (QsRecordDecoder.parsers[id] as RecordParser).call(this, id, raw);
  }

  /**
   * The parser of the predefined record `id` (the table `parsers` is made of these, with the
   * prototype as `this`: the parsers are its methods).
   */
  private parserOf(id: number): RecordParser {
    switch (id) {
      case Id.QS_EMPTY:
        return this.parseEmpty;
      case Id.QS_QEP_STATE_ENTRY:
      case Id.QS_QEP_STATE_EXIT:
        return this.parseStateEntryExit;
      case Id.QS_QEP_STATE_INIT:
      case Id.QS_QEP_TRAN_HIST:
      case Id.QS_QEP_TRAN_EP:
      case Id.QS_QEP_TRAN_XP:
        return this.parseStateTransition;
      case Id.QS_QEP_INIT_TRAN:
        return this.parseInitTran;
      case Id.QS_QEP_INTERN_TRAN:
      case Id.QS_QEP_IGNORED:
      case Id.QS_QEP_DISPATCH:
        return this.parseDispatchLike;
      case Id.QS_QEP_TRAN:
        return this.parseTran;
      case Id.QS_QEP_UNHANDLED:
        return this.parseUnhandled;
      case Id.QS_QF_ACTIVE_DEFER:
      case Id.QS_QF_ACTIVE_RECALL:
        return this.parseDeferRecall;
      case Id.QS_QF_ACTIVE_SUBSCRIBE:
      case Id.QS_QF_ACTIVE_UNSUBSCRIBE:
        return this.parseSubscribe;
      case Id.QS_QF_ACTIVE_POST:
      case Id.QS_QF_ACTIVE_POST_ATTEMPT:
        return this.parseActivePost;
      case Id.QS_QF_ACTIVE_POST_LIFO:
      case Id.QS_QF_EQUEUE_POST:
      case Id.QS_QF_EQUEUE_POST_LIFO:
      case Id.QS_QF_EQUEUE_POST_ATTEMPT:
        return this.parseQueuePost;
      case Id.QS_QF_ACTIVE_GET:
      case Id.QS_QF_EQUEUE_GET:
        return this.parseQueueGet;
      case Id.QS_QF_ACTIVE_GET_LAST:
      case Id.QS_QF_EQUEUE_GET_LAST:
        return this.parseQueueGetLast;
      case Id.QS_QF_ACTIVE_RECALL_ATTEMPT:
        return this.parseRecallAttempt;
      case Id.QS_QF_NEW_ATTEMPT:
      case Id.QS_QF_NEW:
        return this.parseNew;
      case Id.QS_QF_MPOOL_GET:
      case Id.QS_QF_MPOOL_GET_ATTEMPT:
        return this.parsePoolGet;
      case Id.QS_QF_MPOOL_PUT:
        return this.parsePoolPut;
      case Id.QS_QF_PUBLISH:
        return this.parsePublish;
      case Id.QS_QF_NEW_REF:
      case Id.QS_QF_GC_ATTEMPT:
      case Id.QS_QF_GC:
      case Id.QS_QF_DELETE_REF:
        return this.parseEventRef;
      case Id.QS_QF_TICK:
        return this.parseTick;
      case Id.QS_QF_TIMEEVT_ARM:
      case Id.QS_QF_TIMEEVT_DISARM:
        return this.parseTimeEvtArmDisarm;
      case Id.QS_QF_TIMEEVT_AUTO_DISARM:
        return this.parseTimeEvtAutoDisarm;
      case Id.QS_QF_TIMEEVT_DISARM_ATTEMPT:
        return this.parseTimeEvtDisarmAttempt;
      case Id.QS_QF_TIMEEVT_REARM:
        return this.parseTimeEvtRearm;
      case Id.QS_QF_TIMEEVT_POST:
        return this.parseTimeEvtPost;
      case Id.QS_QF_CRIT_ENTRY:
      case Id.QS_QF_CRIT_EXIT:
        return this.parseCrit;
      case Id.QS_QF_ISR_ENTRY:
      case Id.QS_QF_ISR_EXIT:
        return this.parseIsr;
      case Id.QS_SCHED_PREEMPT:
      case Id.QS_SCHED_RESTORE:
      case Id.QS_SCHED_NEXT:
        return this.parseSchedPrio;
      case Id.QS_SCHED_LOCK:
      case Id.QS_SCHED_UNLOCK:
        return this.parseSchedLock;
      case Id.QS_SCHED_IDLE:
        return this.parseSchedIdle;
      case Id.QS_ENUM_DICT:
        return this.parseEnumDict;
      case Id.QS_TEST_PAUSED:
        return testPaused;
      case Id.QS_TEST_PROBE_GET:
        return testProbe;
      case Id.QS_SIG_DICT:
        return this.parseSigDict;
      case Id.QS_OBJ_DICT:
      case Id.QS_FUN_DICT:
        return this.parseObjFunDict;
      case Id.QS_USR_DICT:
        return this.parseUsrDict;
      case Id.QS_TARGET_INFO:
        return this.parseTargetInfo;
      case Id.QS_TARGET_DONE:
        return targetDone;
      case Id.QS_RX_STATUS:
        return rxStatus;
      case Id.QS_QUERY_DATA:
        return queryData;
      case Id.QS_PEEK_DATA:
        return peekData;
      case Id.QS_ASSERT_FAIL:
        return this.parseAssertFail;
      case Id.QS_QF_RUN:
        return this.parseQfRun;
      case Id.QS_SEM_TAKE:
      case Id.QS_SEM_BLOCK:
      case Id.QS_SEM_SIGNAL:
      case Id.QS_SEM_BLOCK_ATTEMPT:
      case Id.QS_MTX_LOCK:
      case Id.QS_MTX_BLOCK:
      case Id.QS_MTX_UNLOCK:
      case Id.QS_MTX_LOCK_ATTEMPT:
      case Id.QS_MTX_BLOCK_ATTEMPT:
      case Id.QS_MTX_UNLOCK_ATTEMPT:
        return this.parseSemMtx;
      case Id.QS_QF_ACTIVE_DEFER_ATTEMPT:
        // QS_QF_ACTIVE_DEFER_ATTEMPT from QS 8.0; reserved before.
        return this.parseDeferAttempt;
      default:
        return this.parseUnknown;
    }
  }

  private parseDeferAttempt(id: number, raw: Uint8Array): DecodedRecord {
    return this.config.version >= 800 ? this.parseDeferRecall(id, raw) : this.parseUnknown(id, raw);
  }

  private parseEmpty(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    // QS_EMPTY: nothing printed (before QS 5.5 it announced a target reset).
    if (c.version >= 550) {
      return { kind: 'info', type: 0, name: 'QS_EMPTY', targetTs: null, fields: {}, text: '', raw };
    }
    if (r.remaining !== 0) return this.lengthError(id, raw);
    this.dicts.resetAll();
    return this.done(
      id,
      'info',
      null,
      `${NO_TS}Trg-RST  ${c.version}`,
      this.fieldsWanted ? { reset: true } : NO_FIELDS,
      raw,
    );
  }

  private parseStateEntryExit(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const o = r.ptr(c.objPtrSize);
    const f = r.ptr(c.funPtrSize);
    if (this.lineAgain(-1, id === Id.QS_QEP_STATE_ENTRY ? ST_ENTRY : ST_EXIT, o, f, 0, 0, 0, 0))
      return this.done(id, 'record', null, '', NO_FIELDS, raw);
    return this.done(
      id,
      'record',
      null,
      this.plainLine(id === Id.QS_QEP_STATE_ENTRY ? ST_ENTRY : ST_EXIT, this.obj(o), this.fun(f)),
      this.fieldsWanted ? { obj: this.objF(o), state: this.funF(f) } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: this.objF(o) } : undefined,
    );
  }

  private parseStateTransition(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const o = r.ptr(c.objPtrSize);
    const f1 = r.ptr(c.funPtrSize);
    const f2 = r.ptr(c.funPtrSize);
    if (this.lineAgain(-1, STATE_TRAN[id], o, f1, f2, 0, 0, 0))
      return this.done(id, 'record', null, '', NO_FIELDS, raw);
    return this.done(
      id,
      'record',
      null,
      this.plainLine(STATE_TRAN[id], this.obj(o), this.fun(f1), this.fun(f2)),
      this.fieldsWanted ? { obj: this.objF(o), source: this.funF(f1), target: this.funF(f2) } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: this.objF(o) } : undefined,
    );
  }

  private parseInitTran(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const o = r.ptr(c.objPtrSize);
    const f = r.ptr(c.funPtrSize);
    if (this.lineAgain(t, INIT_TRAN, o, f, 0, 0, 0, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, INIT_TRAN, this.obj(o), this.fun(f)),
      this.fieldsWanted ? { obj: this.objF(o), state: this.funF(f) } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: this.objF(o) } : undefined,
    );
  }

  private parseDispatchLike(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    const f = r.ptr(c.funPtrSize);
    const parts = id === Id.QS_QEP_INTERN_TRAN ? INTERN_TRAN : id === Id.QS_QEP_IGNORED ? IGNORED : DISPATCH;
    if (this.lineAgain(t, parts, o, f, 0, s, 0, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const on = this.objNames(o);
    const sigF = this.sigF(s, o);
    const sigT = this.sig(s, o);
    const fn = this.funNames(f);
    const m = this.dispatchText;
    if (!m.same(parts, on.text, sigT, fn.text, '', '')) m.keep(parts, on.text, sigT, fn.text, '', '');
    return this.done(
      id,
      'record',
      t,
      this.memoLine(t, m),
      this.fieldsWanted ? { obj: on.field, sig: sigF, state: fn.field } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: on.field, sig: sigF } : undefined,
    );
  }

  private parseTran(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    const f1 = r.ptr(c.funPtrSize);
    const f2 = r.ptr(c.funPtrSize);
    if (this.lineAgain(t, TRAN, o, f1, f2, s, 0, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    const sigF = this.sigF(s, o);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, TRAN, this.obj(o), this.sig(s, o), this.fun(f1), this.fun(f2)),
      this.fieldsWanted ? { obj: objF, sig: sigF, source: this.funF(f1), target: this.funF(f2) } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseUnhandled(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    const f = r.ptr(c.funPtrSize);
    if (this.lineAgain(-1, UNHANDLED, o, f, 0, s, 0, 0)) return this.done(id, 'record', null, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    const sigF = this.sigF(s, o);
    return this.done(
      id,
      'record',
      null,
      this.plainLine(UNHANDLED, this.obj(o), this.sig(s, o), this.fun(f)),
      this.fieldsWanted ? { obj: objF, sig: sigF, state: this.funF(f) } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseDeferRecall(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    if (c.version < 620) return id === Id.QS_QF_ACTIVE_RECALL ? this.parseActiveRemove(id, raw) : this.silent(id, raw);
    const t = r.u(c.timeSize);
    const ao = r.ptr(c.objPtrSize);
    const q = r.ptr(c.objPtrSize);
    const s = r.u(c.sigSize);
    const pool = r.u(1);
    const ref = r.u(1);
    const parts = id === Id.QS_QF_ACTIVE_DEFER ? DEFER : id === Id.QS_QF_ACTIVE_RECALL ? RECALL : DEFER_ATTEMPT;
    if (this.lineAgain(t, parts, ao, q, 0, s, pool, ref)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(ao);
    const sigF = this.sigF(s, ao);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, parts, this.obj(ao), this.secondObj(ao, q), this.sig(s, ao), POOL_REF.of(pool, ref)),
      this.fieldsWanted ? { obj: objF, queue: this.objF(q), sig: sigF, pool, ref } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  /** Id 11 before QS 6.2: QS_QF_ACTIVE_REMOVE. */
  private parseActiveRemove(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const o = r.ptr(c.objPtrSize);
    const prio = r.u(1);
    const objF = this.objF(o);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` AO-Remov Obj=${this.obj(o)},Pri=${dec(prio)}`),
      this.fieldsWanted ? { obj: objF, prio } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, prio } : undefined,
    );
  }

  /**
   * A record QSPY reads nothing of and prints nothing for (id 10 before QS 6.2: its
   * QS_QF_ACTIVE_ADD branch only runs for id 11), so no length check either.
   */
  private silent(id: number, raw: Uint8Array): DecodedRecord {
    return { kind: 'record', type: id, name: QS_RECORD_NAMES[id], targetTs: null, fields: {}, text: '', raw };
  }

  private parseSubscribe(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    const parts = id === Id.QS_QF_ACTIVE_SUBSCRIBE ? SUBSCRIBE : UNSUBSCRIBE;
    if (this.lineAgain(t, parts, o, 0, 0, s, 0, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    const sigF = this.sigF(s, o);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, parts, this.obj(o), this.sig(s, o)),
      this.fieldsWanted ? { obj: objF, sig: sigF } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseActivePost(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    if (c.version < 420) return this.parseActivePostBefore42(id, raw);
    const t = r.u(c.timeSize);
    const sdr = r.ptr(c.objPtrSize);
    const s = r.u(c.sigSize);
    const ao = r.ptr(c.objPtrSize);
    const pool = r.u(1);
    const ref = r.u(1);
    const free = r.u(c.queueCtrSize);
    const min = r.u(c.queueCtrSize);
    if (
      this.lineAgain(
        t,
        id === Id.QS_QF_ACTIVE_POST ? ACTIVE_POST : ACTIVE_POST_ATTEMPT,
        sdr,
        ao,
        free,
        s,
        pool * 256 + ref,
        min,
      )
    )
      return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const sdrN = this.objNames(sdr);
    const aoN = this.objNames(ao);
    const sigF = this.sigF(s, ao);
    const sigT = this.sig(s, ao);
    const parts = id === Id.QS_QF_ACTIVE_POST ? ACTIVE_POST : ACTIVE_POST_ATTEMPT;
    const poolRef = POOL_REF.of(pool, ref);
    const que = (id === Id.QS_QF_ACTIVE_POST ? QUE_MIN : QUE_MAR).of(free, min);
    const m = this.activePostText;
    if (!m.same(parts, sdrN.text, aoN.text, sigT, poolRef, que)) m.keep(parts, sdrN.text, aoN.text, sigT, poolRef, que);
    return this.done(
      id,
      'record',
      t,
      this.memoLine(t, m),
      this.fieldsWanted
        ? id === Id.QS_QF_ACTIVE_POST
          ? { sender: sdrN.field, obj: aoN.field, sig: sigF, pool, ref, free, min }
          : { sender: sdrN.field, obj: aoN.field, sig: sigF, pool, ref, free, margin: min }
        : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: aoN.field, sig: sigF } : undefined,
    );
  }
  /** Ids 14 and 45 before QS 4.2: no sender, pool and ref in one byte. */
  private parseActivePostBefore42(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const ao = r.ptr(c.objPtrSize);
    const pr = r.u(1);
    const free = r.u(c.queueCtrSize);
    const min = r.u(c.queueCtrSize);
    const pool = pr >> 6;
    const ref = pr & 0x3f;
    const objF = this.objF(ao);
    const sigF = this.sigF(s, ao);
    const que = (id === Id.QS_QF_ACTIVE_POST ? QUE_MIN : QUE_MAR).of(free, min);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(
        t,
        ` ${id === Id.QS_QF_ACTIVE_POST ? 'AO-Post ' : 'AO-PostA'} Sdr=${this.obj(0)},Obj=${this.obj(ao)},Evt<Sig=${this.sig(s, ao)}${POOL_REF.of(pool, ref)}${que}`,
      ),
      this.fieldsWanted
        ? id === Id.QS_QF_ACTIVE_POST
          ? { sender: this.objF(0), obj: objF, sig: sigF, pool, ref, free, min }
          : { sender: this.objF(0), obj: objF, sig: sigF, pool, ref, free, margin: min }
        : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseQueuePost(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    // Before QS 4.2 pool and ref shared one byte.
    const pr = r.u(1);
    const pool = c.version < 420 ? pr >> 6 : pr;
    const ref = c.version < 420 ? pr & 0x3f : r.u(1);
    const free = r.u(c.queueCtrSize);
    const min = r.u(c.queueCtrSize);
    if (this.lineAgain(t, QUEUE_POST[id], o, free, min, s, pool * 256 + ref, 0))
      return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    const sigF = this.sigF(s, o);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(
        t,
        QUEUE_POST[id],
        this.obj(o),
        this.sig(s, o),
        POOL_REF.of(pool, ref),
        (id === Id.QS_QF_EQUEUE_POST_ATTEMPT ? QUE_MAR : QUE_MIN).of(free, min),
      ),
      this.fieldsWanted
        ? id === Id.QS_QF_EQUEUE_POST_ATTEMPT
          ? { obj: objF, sig: sigF, pool, ref, free, margin: min }
          : { obj: objF, sig: sigF, pool, ref, free, min }
        : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseQueueGet(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    // Before QS 4.2 pool and ref shared one byte.
    const pr = r.u(1);
    const pool = c.version < 420 ? pr >> 6 : pr;
    const ref = c.version < 420 ? pr & 0x3f : r.u(1);
    const free = r.u(c.queueCtrSize);
    const parts = id === Id.QS_QF_ACTIVE_GET ? AO_GET : EQ_GET;
    if (this.lineAgain(t, parts, o, 0, 0, s, pool * 256 + ref, free))
      return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    const sigF = this.sigF(s, o);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, parts, this.obj(o), this.sig(s, o), POOL_REF.of(pool, ref), QUE_FREE.of(free)),
      this.fieldsWanted ? { obj: objF, sig: sigF, pool, ref, free } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseQueueGetLast(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    // Before QS 4.2 pool and ref shared one byte.
    const pr = r.u(1);
    const pool = c.version < 420 ? pr >> 6 : pr;
    const ref = c.version < 420 ? pr & 0x3f : r.u(1);
    const parts = id === Id.QS_QF_ACTIVE_GET_LAST ? AO_GET_LAST : EQ_GET_LAST;
    if (this.lineAgain(t, parts, o, 0, 0, s, pool, ref)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    const sigF = this.sigF(s, o);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, parts, this.obj(o), this.sig(s, o), POOL_REF.of(pool, ref)),
      this.fieldsWanted ? { obj: objF, sig: sigF, pool, ref } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseRecallAttempt(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    if (c.version < 620) return this.parseQueueInit(id, raw);
    const t = r.u(c.timeSize);
    const ao = r.ptr(c.objPtrSize);
    const q = r.ptr(c.objPtrSize);
    const objF = this.objF(ao);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` AO-RCllA Obj=${this.obj(ao)},Que=${this.secondObj(ao, q)}`),
      this.fieldsWanted ? { obj: objF, queue: this.objF(q) } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  /** Id 18 before QS 6.2: QS_QF_EQUEUE_INIT. */
  private parseQueueInit(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const o = r.ptr(c.objPtrSize);
    const len = r.u(c.queueCtrSize);
    const objF = this.objF(o);
    return this.done(
      id,
      'record',
      null,
      `${NO_TS}EQ-Init  Obj=${this.obj(o)},Len=${dec(len)}`,
      this.fieldsWanted ? { obj: objF, length: len } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  private parseNew(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const size = r.u(c.eventSize);
    const s = r.u(c.sigSize);
    const parts = id === Id.QS_QF_NEW_ATTEMPT ? NEW_ATTEMPT : NEW;
    if (this.lineAgain(t, parts, 0, 0, 0, s, size, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const sigF = this.sigF(s, 0);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, parts, this.sig(s, 0), dec(size)),
      this.fieldsWanted ? { sig: sigF, size } : NO_FIELDS,
      raw,
      this.fieldsWanted
        ? {
            sig: sigF,
          }
        : undefined,
    );
  }

  private parsePoolGet(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const o = r.ptr(c.objPtrSize);
    const free = r.u(c.poolCtrSize);
    const min = r.u(c.poolCtrSize);
    if (this.lineAgain(t, id === Id.QS_QF_MPOOL_GET ? POOL_GET : POOL_GET_ATTEMPT, o, 0, 0, free, min, 0))
      return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    return this.done(
      id,
      'record',
      t,
      id === Id.QS_QF_MPOOL_GET
        ? this.partsLine(t, POOL_GET, this.obj(o), dec(free), dec(min))
        : this.partsLine(t, POOL_GET_ATTEMPT, this.obj(o), dec(free), dec(min)),
      this.fieldsWanted
        ? id === Id.QS_QF_MPOOL_GET
          ? { obj: objF, free, min }
          : { obj: objF, free, margin: min }
        : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  private parsePoolPut(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const o = r.ptr(c.objPtrSize);
    const free = r.u(c.poolCtrSize);
    if (this.lineAgain(t, POOL_PUT, o, 0, 0, free, 0, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(o);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, POOL_PUT, this.obj(o), dec(free)),
      this.fieldsWanted ? { obj: objF, free } : NO_FIELDS,
      raw,
      this.fieldsWanted
        ? {
            obj: objF,
          }
        : undefined,
    );
  }

  private parsePublish(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    // Before QS 4.2: no sender, and pool and ref in one byte.
    const old = c.version < 420;
    const sdr = old ? 0 : r.ptr(c.objPtrSize);
    const s = r.u(c.sigSize);
    const pr = r.u(1);
    const pool = old ? pr >> 6 : pr;
    const ref = old ? pr & 0x3f : r.u(1);
    if (this.lineAgain(t, PUBLISH, sdr, 0, 0, s, pool, ref)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const sigF = this.sigF(s, 0);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, PUBLISH, this.obj(sdr), this.sig(s, 0), POOL_REF.of(pool, ref)),
      this.fieldsWanted ? { sender: this.objF(sdr), sig: sigF, pool, ref } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { sig: sigF } : undefined,
    );
  }

  private parseEventRef(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    // Before QS 6.2 id 38 was QS_QF_TIMEEVT_CTR, laid out and printed as a time-event arm.
    if (id === Id.QS_QF_DELETE_REF && c.version < 620) return this.parseTimeEvtArmDisarm(id, raw);
    const t = r.u(c.timeSize);
    const s = r.u(c.sigSize);
    // Before QS 4.2 the garbage-collector records had pool and ref in one byte.
    const packed = c.version < 420 && (id === Id.QS_QF_GC_ATTEMPT || id === Id.QS_QF_GC);
    const pr = r.u(1);
    const pool = packed ? pr >> 6 : pr;
    const ref = packed ? pr & 0x3f : r.u(1);
    const parts =
      id === Id.QS_QF_NEW_REF
        ? NEW_REF
        : id === Id.QS_QF_GC_ATTEMPT
          ? GC_ATTEMPT
          : id === Id.QS_QF_GC
            ? GC
            : DELETE_REF;
    if (this.lineAgain(t, parts, 0, 0, 0, s, pool, ref)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const sigF = this.sigF(s, 0);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, parts, this.sig(s, 0), POOL_REF.of(pool, ref)),
      this.fieldsWanted ? { sig: sigF, pool, ref } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { sig: sigF } : undefined,
    );
  }

  private parseTick(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const ctr = r.u(c.teCtrSize);
    const rate = c.version < 500 ? 0 : r.u(1);
    return this.done(
      id,
      'record',
      null,
      this.plainLine(TICK, dec(rate), this.counterText.of(ctr)),
      this.fieldsWanted ? { rate, ctr } : NO_FIELDS,
      raw,
    );
  }

  private parseTimeEvtArmDisarm(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const te = r.ptr(c.objPtrSize);
    const ao = r.ptr(c.objPtrSize);
    const tim = r.u(c.teCtrSize);
    const int = r.u(c.teCtrSize);
    const rate = c.version < 500 ? 0 : r.u(1);
    if (this.lineAgain(t, TIME_EVT, te, ao, tim, id * 256 + rate, int, 0))
      return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const teN = this.objNames(te);
    const aoN = this.objNames(ao);
    const tag = (id === Id.QS_QF_TIMEEVT_ARM ? TE_ARM : id === Id.QS_QF_TIMEEVT_DISARM ? TE_DISARM : TE_CTR).of(rate);
    const m = this.timeEvtText;
    if (!m.same(TIME_EVT, tag, teN.text, aoN.text, '', '')) m.keep(TIME_EVT, tag, teN.text, aoN.text, '', '');
    return this.done(
      id,
      'record',
      t,
      this.timeEvtLine(t, m, tim, int),
      this.fieldsWanted ? { obj: teN.field, ao: aoN.field, tim, interval: int, rate } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: teN.field } : undefined,
    );
  }

  private parseTimeEvtAutoDisarm(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const te = r.ptr(c.objPtrSize);
    const ao = r.ptr(c.objPtrSize);
    const rate = c.version < 500 ? 0 : r.u(1);
    if (this.lineAgain(-1, TE_AUTO_DISARM, te, ao, 0, rate, 0, 0))
      return this.done(id, 'record', null, '', NO_FIELDS, raw);
    const objF = this.objF(te);
    return this.done(
      id,
      'record',
      null,
      this.plainLine(TE_AUTO_DISARM, dec(rate), this.obj(te), this.obj(ao)),
      this.fieldsWanted ? { obj: objF, ao: this.objF(ao), rate } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  private parseTimeEvtDisarmAttempt(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const te = r.ptr(c.objPtrSize);
    const ao = r.ptr(c.objPtrSize);
    const rate = c.version < 500 ? 0 : r.u(1);
    if (this.lineAgain(t, TE_DISARM_ATTEMPT, te, ao, 0, rate, 0, 0))
      return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(te);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, TE_DISARM_ATTEMPT, dec(rate), this.obj(te), this.obj(ao)),
      this.fieldsWanted ? { obj: objF, ao: this.objF(ao), rate } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  private parseTimeEvtRearm(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const te = r.ptr(c.objPtrSize);
    const ao = r.ptr(c.objPtrSize);
    const tim = r.u(c.teCtrSize);
    const int = r.u(c.teCtrSize);
    // The target sends (rate, wasArmed); QSPY prints them the other way round (Q3).
    const rate = c.version < 500 ? 0 : r.u(1);
    const wasArmed = r.u(1);
    const objF = this.objF(te);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(
        t,
        ` TE${dec(wasArmed)}-Rarm Obj=${this.obj(te)},AO=${this.obj(ao)},Tim=${dec(tim)},Int=${dec(int)},Was=${dec(rate)}`,
      ),
      this.fieldsWanted
        ? { obj: objF, ao: this.objF(ao), tim, interval: int, rate, wasArmed: wasArmed !== 0 }
        : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  private parseTimeEvtPost(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const te = r.ptr(c.objPtrSize);
    const s = r.u(c.sigSize);
    const ao = r.ptr(c.objPtrSize);
    const rate = c.version < 500 ? 0 : r.u(1);
    if (this.lineAgain(t, TE_POST, te, ao, 0, s, rate, 0)) return this.done(id, 'record', t, '', NO_FIELDS, raw);
    const objF = this.objF(te);
    const sigF = this.sigF(s, ao);
    return this.done(
      id,
      'record',
      t,
      this.partsLine(t, TE_POST, dec(rate), this.obj(te), this.sig(s, ao), this.obj(ao)),
      this.fieldsWanted ? { obj: objF, sig: sigF, ao: this.objF(ao), rate } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF, sig: sigF } : undefined,
    );
  }

  private parseCrit(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const nest = r.u(1);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` ${id === Id.QS_QF_CRIT_ENTRY ? 'QF-CritE' : 'QF-CritX'} Nest=${dec(nest)}`),
      this.fieldsWanted ? { nest } : NO_FIELDS,
      raw,
    );
  }

  private parseIsr(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const nest = r.u(1);
    const prio = r.u(1);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` ${id === Id.QS_QF_ISR_ENTRY ? 'QF-IsrE ' : 'QF-IsrX '} Nest=${dec(nest)},Pri=${dec(prio)}`),
      this.fieldsWanted ? { nest, prio } : NO_FIELDS,
      raw,
      this.fieldsWanted ? { prio } : undefined,
    );
  }

  private parseSchedPrio(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const a = r.u(1);
    const b = r.u(1);
    if (c.version < 710 && id !== Id.QS_SCHED_NEXT) {
      // Before QS 7.1 ids 48 and 49 were the mutex lock and unlock.
      const tag = id === Id.QS_SCHED_PREEMPT ? 'Mtx-Lock' : 'Mtx-Unlk';
      const text = this.tsLine(t, ` ${tag} Pro=${dec(a)},Ceil=${dec(b)}`);
      return this.done(
        id,
        'record',
        t,
        text,
        this.fieldsWanted ? { prio: a, ceiling: b } : NO_FIELDS,
        raw,
        this.fieldsWanted ? { prio: a } : undefined,
      );
    }
    const tag = id === Id.QS_SCHED_PREEMPT ? 'Sch-Pre ' : id === Id.QS_SCHED_RESTORE ? 'Sch-Rest' : 'Sch-Next';
    // QSPY prints the second byte first (Q11); the fields keep the wire order.
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` ${tag} Pri=${dec(b)}->${dec(a)}`),
      this.fieldsWanted ? { prio: a, prevPrio: b } : NO_FIELDS,
      raw,
      this.fieldsWanted
        ? {
            prio: a,
          }
        : undefined,
    );
  }

  private parseSchedLock(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const a = r.u(1);
    const b = r.u(1);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` ${id === Id.QS_SCHED_LOCK ? 'Sch-Lock' : 'Sch-Unlk'} Ceil=${dec(a)}->${dec(b)}`),
      this.fieldsWanted ? { prevCeiling: a, ceiling: b } : NO_FIELDS,
      raw,
    );
  }

  private parseSchedIdle(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const a = r.u(1);
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` Sch-Idle Pri=${dec(a)}->0`),
      this.fieldsWanted ? { prevPrio: a } : NO_FIELDS,
      raw,
    );
  }

  private parseEnumDict(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const value = r.u(1);
    const group = r.u(1);
    const name = r.str();
    if (r.remaining === 0) this.dicts.enums[group & 7].put(value, name);
    return this.done(
      id,
      'dict',
      null,
      `${NO_TS}Enum-Dic ${zeroPad(value, 3)},Grp=${group & 7}->${name}`,
      this.fieldsWanted ? { value, group: group & 7, name: r.lastStr } : NO_FIELDS,
      raw,
    );
  }

  private parseSigDict(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const s = r.u(c.sigSize);
    const o = r.ptr(c.objPtrSize);
    const hi = r.hi;
    const lo = r.lo;
    const name = r.str();
    if (r.remaining === 0) this.dicts.sig.put(s, o, name);
    const objHex = c.objPtrSize <= 4 ? hex8(lo) : hex16(hi, lo);
    return this.done(
      id,
      'dict',
      null,
      this.plainLine(SIG_DICT, zeroPad(s | 0, 8), objHex, name),
      this.fieldsWanted ? { sig: s, obj: `0x${objHex}`, name: r.lastStr } : NO_FIELDS,
      raw,
    );
  }

  private parseObjFunDict(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const size = id === Id.QS_OBJ_DICT ? c.objPtrSize : c.funPtrSize;
    const k = r.ptr(size);
    const hex = size <= 4 ? hex8(r.lo) : hex16(r.hi, r.lo);
    let name = r.str();
    // Before QS 6.9 QSPY showed array objects' brackets as angle brackets.
    if (id === Id.QS_OBJ_DICT && c.version < 690) name = name.replaceAll('[', '<').replaceAll(']', '>');
    if (r.remaining === 0) (id === Id.QS_OBJ_DICT ? this.dicts.obj : this.dicts.fun).put(k, name);
    return this.done(
      id,
      'dict',
      null,
      this.plainLine(id === Id.QS_OBJ_DICT ? OBJ_DICT : FUN_DICT, hex, name),
      this.fieldsWanted
        ? id === Id.QS_OBJ_DICT
          ? { obj: `0x${hex}`, name: r.lastStr }
          : { fun: `0x${hex}`, name: r.lastStr }
        : NO_FIELDS,
      raw,
    );
  }

  private parseUsrDict(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const rec = r.u(1);
    const name = r.str();
    if (r.remaining === 0) this.dicts.usr.put(rec, name);
    return this.done(
      id,
      'dict',
      null,
      this.plainLine(USR_DICT, zeroPad(rec, 8), name),
      this.fieldsWanted ? { recId: rec, name: r.lastStr } : NO_FIELDS,
      raw,
    );
  }

  private parseAssertFail(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const loc = r.u(2);
    const mod = r.str();
    return this.done(
      id,
      'record',
      t,
      this.tsLine(t, ` =ASSERT= Mod=${mod},Loc=${dec(loc)}`),
      this.fieldsWanted ? { module: r.lastStr, location: loc } : NO_FIELDS,
      raw,
    );
  }

  private parseQfRun(id: number, raw: Uint8Array): DecodedRecord {
    return this.done(id, 'info', null, `${NO_TS}QF_RUN`, {}, raw);
  }

  private parseSemMtx(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const c = this.config;
    const t = r.u(c.timeSize);
    const o = r.ptr(c.objPtrSize);
    const a = r.u(1);
    const b = r.u(1);
    const tag = SEM_MTX_TAGS[id - Id.QS_SEM_TAKE];
    const objF = this.objF(o);
    let text: string;
    let fields: Fields;
    if (id <= Id.QS_SEM_BLOCK_ATTEMPT) {
      text = this.tsLine(t, ` ${tag} ${this.obj(o)},Thr=${dec(a)},Cnt=${dec(b)}`);
      fields = { obj: objF, thread: a, count: b };
    } else if (id === Id.QS_MTX_BLOCK || id === Id.QS_MTX_BLOCK_ATTEMPT) {
      text = this.tsLine(t, ` ${tag} ${this.obj(o)},Hldr=${dec(a)},Thr=${dec(b)}`);
      fields = { obj: objF, holder: a, thread: b };
    } else {
      text = this.tsLine(t, ` ${tag} ${this.obj(o)},Hldr=${dec(a)},Nest=${dec(b)}`);
      fields = { obj: objF, holder: a, nest: b };
    }
    return this.done(
      id,
      'record',
      t,
      text,
      this.fieldsWanted ? fields : NO_FIELDS,
      raw,
      this.fieldsWanted ? { obj: objF } : undefined,
    );
  }

  private parseUnknown(id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    // 43, 44 and 81..99: QSPY has no decoder for these.
    const len = r.remaining;
    return {
      kind: 'record',
      type: id,
      name: this.names[id],
      targetTs: null,
      fields: { length: len, payload: r.buf.slice(r.pos, r.pos + len) },
      text: `${NO_TS}Unknown Rec=${id},Len=${len}`,
      raw,
    };
  }

  private parseTargetInfo(_id: number, raw: Uint8Array): DecodedRecord {
    const r = this.r;
    const b = r.buf;
    const isReset = r.u(1);
    let version: number;
    let bigEndian: boolean;
    let reset: boolean;
    let versionWord: number;
    let framework: number | null = null;
    let releaseDate: number | null = null;
    if ((isReset & 3) === 2 && r.remaining >= 17) {
      // QP 8.x layout (spec 12): flags byte (bit 6 reset, bit 7 big-endian, bits 2-3 framework),
      // a bit-inverted u32 (release date * 10000 + version), then the same 13 bytes.
      const v = ~r.u(4) >>> 0;
      version = v % 10000;
      releaseDate = Math.floor(v / 10000);
      framework = (isReset >> 2) & 3;
      bigEndian = (isReset & 0x80) !== 0;
      reset = (isReset & 0x40) !== 0;
      // 8.x QSPY prints the version alone; there is no version word with an endianness bit.
      versionWord = version;
    } else {
      versionWord = r.u(2);
      version = versionWord & 0x7fff;
      bigEndian = (versionWord & 0x8000) !== 0;
      reset = isReset !== 0;
    }
    const p = r.pos;
    // Five bytes of size nibbles, read below from the buffer.
    for (let i = 0; i < 5; i++) r.u(1);
    const maxActive = r.u(1);
    const poolsRates = r.u(1);
    const build = [r.u(1), r.u(1), r.u(1), r.u(1), r.u(1), r.u(1)];
    if (r.remaining !== 0) return this.lengthError(Id.QS_TARGET_INFO, raw);
    const next: QsTargetConfig = {
      version,
      bigEndian,
      sigSize: b[p] & 0x0f,
      eventSize: (b[p] >> 4) & 0x0f,
      queueCtrSize: b[p + 1] & 0x0f,
      teCtrSize: (b[p + 1] >> 4) & 0x0f,
      poolBlkSize: b[p + 2] & 0x0f,
      poolCtrSize: (b[p + 2] >> 4) & 0x0f,
      objPtrSize: b[p + 3] & 0x0f,
      funPtrSize: (b[p + 3] >> 4) & 0x0f,
      timeSize: b[p + 4] & 0x0f,
      build,
    };
    const prev = this.config;
    const differs =
      prev.version !== next.version ||
      prev.bigEndian !== next.bigEndian ||
      prev.sigSize !== next.sigSize ||
      prev.eventSize !== next.eventSize ||
      prev.queueCtrSize !== next.queueCtrSize ||
      prev.teCtrSize !== next.teCtrSize ||
      prev.poolBlkSize !== next.poolBlkSize ||
      prev.poolCtrSize !== next.poolCtrSize ||
      prev.objPtrSize !== next.objPtrSize ||
      prev.funPtrSize !== next.funPtrSize ||
      prev.timeSize !== next.timeSize ||
      prev.build.some((v, i) => v !== build[i]);
    // QSPY knows a target info came before by the stored build year, zeroed at start-up.
    const seenBefore = prev.build[5] !== 0;
    this.configure(next);
    this.targetInfoSeen = true;
    const stamp = `${zeroPad(build[5], 2)}${zeroPad(build[4], 2)}${zeroPad(build[3], 2)}_${zeroPad(build[2], 2)}${zeroPad(build[1], 2)}${zeroPad(build[0], 2)}`;
    let text = `${NO_TS}${reset ? 'Trg-RST ' : 'Trg-Info'} QP-Ver=${versionWord},Build=${stamp}`;
    const mismatch = differs && seenBefore;
    if (mismatch) {
      text += '\n   <QSPY-> Target info mismatch (dictionaries discarded)';
      this.dicts.resetAll();
    }
    if (reset) {
      this.dicts.resetAll();
      this.hostSeqReset = true;
    }
    this.reloadDictionaryFile();
    return {
      kind: 'info',
      type: Id.QS_TARGET_INFO,
      name: 'QS_TARGET_INFO',
      targetTs: null,
      fields: {
        reset,
        version,
        bigEndian,
        sigSize: next.sigSize,
        eventSize: next.eventSize,
        queueCtrSize: next.queueCtrSize,
        teCtrSize: next.teCtrSize,
        poolBlkSize: next.poolBlkSize,
        poolCtrSize: next.poolCtrSize,
        objPtrSize: next.objPtrSize,
        funPtrSize: next.funPtrSize,
        timeSize: next.timeSize,
        maxActive,
        maxEventPools: poolsRates & 0x0f,
        maxTickRates: (poolsRates >> 4) & 0x0f,
        build: `20${stamp}`,
        mismatch,
        ...(framework === null ? {} : { framework, releaseDate }),
      },
      text,
      raw,
    };
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

/** The record tag QSPY prints after the timestamp, by id, where one parser serves several ids. */
const TAG: readonly string[] = (() => {
  const tags = new Array<string>(Id.QS_USER).fill('');
  tags[Id.QS_QEP_STATE_INIT] = 'St-Init ';
  tags[Id.QS_QEP_TRAN_HIST] = 'St-Hist ';
  tags[Id.QS_QEP_TRAN_EP] = 'St-EP   ';
  tags[Id.QS_QEP_TRAN_XP] = 'St-XP   ';
  tags[Id.QS_QF_ACTIVE_POST_LIFO] = 'AO-LIFO ';
  tags[Id.QS_QF_EQUEUE_POST] = 'EQ-Post ';
  tags[Id.QS_QF_EQUEUE_POST_LIFO] = 'EQ-LIFO'; // one space after LIFO (spec 5)
  tags[Id.QS_QF_EQUEUE_POST_ATTEMPT] = 'EQ-PostA';
  return Object.freeze(tags);
})();

/** The lines of state transitions (no timestamp) and queue posts, by record id. */
const STATE_TRAN: readonly LineParts[] = TAG.map((tag) => new LineParts(`${RTC}${tag} Obj=`, ',State=', '->'));
const QUEUE_POST: readonly LineParts[] = TAG.map((tag) => new LineParts(` ${tag} Obj=`, ',Evt<Sig='));

const SEM_MTX_TAGS = [
  'Sem-Take',
  'Sem-Blk ',
  'Sem-Sgnl',
  'Sem-BlkA',
  'Mtx-Lock',
  'Mtx-Blk ',
  'Mtx-Unlk',
  'Mtx-LckA',
  'Mtx-BlkA',
  'Mtx-UlkA',
];
