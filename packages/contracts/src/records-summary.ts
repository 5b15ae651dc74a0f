import { type MachineTallies, machineTalliesOf, mergeMachineTallies } from './machine-tally.js';
import type { BatchRecord } from './record.js';
import { RecordName } from './record-names.js';
import { DigestBuilder, mergeDigests, type RecordsDigest } from './records-digest.js';
import { mergeTargetIndexes, type TargetIndex, targetIndexOf } from './target-index.js';

/**
 * What a run of records of one session holds, in the form a stored block's summary row keeps
 * it: the decoder computes it for each record message (it has the records in hand), storage
 * merges the summaries of the messages it puts in one block, and queries prune on it. JSON
 * throughout (clocks as decimal strings), so it travels in a message header.
 */
export interface RecordsSummary extends RecordsValues {
  firstSeq: number;
  lastSeq: number;
  recordCount: number;
  /** Host receive time range of the records, ns since the epoch (decimal). */
  minHostNs: string;
  maxHostNs: string;
  /** Target time range (decimal), null when no record has a target time. */
  minTargetTs: string | null;
  maxTargetTs: string | null;
  firstChunk: number;
  lastChunk: number;
  errorCount: number;
  gapCount: number;
  /** Sum of `fields.lostBytes` of the error records. */
  lostBytes: number;
  /** Per active object, the last state it entered (null when no record entered one). */
  states: Record<string, StateChange> | null;
  /** Dictionary entries the `dict` records define (the latest of each key). */
  dictionary: DictionaryEntry[];
  /** The latest target-info record's fields, with its seq. */
  targetInfo: { seq: number; fields: Record<string, unknown> } | null;
  /**
   * What two runs are compared by (`RecordsDigest`); absent or null from a publisher that
   * made none, and then a comparison reads the records instead.
   */
  digest?: RecordsDigest | null;
  /** Where the records lie on the target's clock, per record (absent: the publisher made none). */
  target?: TargetIndex;
  /** The QEP records' state machines, counted (null: none; absent: the publisher made none). */
  machines?: MachineTallies | null;
}

/**
 * The distinct values of the fields queries narrow by, of a run of records: a stored block's
 * summary keeps them as arrays, and a query leaves out the blocks none of whose values it wants.
 */
export interface RecordsValues {
  names: string[];
  kinds: string[];
  types: number[];
  objs: string[];
  sigs: string[];
  prios: number[];
  /** STP master/channel pairs, `master/channel`. */
  channels: string[];
}

/** One active object entering a state. */
export interface StateChange {
  seq: number;
  hostNs: string;
  targetTs: string | null;
  state: string;
}

/** A dictionary entry as stored: the record name as kind, the fields other than `name` as key. */
export interface DictionaryEntry {
  kind: string;
  key: string;
  name: string;
  seq: number;
}

/** Records that move a QS state machine into a state; `stateOf` says which state. */
export const STATE_ENTERING_NAMES: readonly string[] = [
  'QS_QEP_INIT_TRAN',
  'QS_QEP_TRAN',
  'QS_QEP_TRAN_HIST',
  'QS_QEP_TRAN_EP',
  'QS_QEP_TRAN_XP',
];
const STATE_ENTERING = new Set(STATE_ENTERING_NAMES);

/** The state a state-entering record enters (null for any other record). */
export function stateOf(r: BatchRecord): string | null {
  if (!STATE_ENTERING.has(r.name)) return null;
  const f = r.fields;
  const state = r.name === 'QS_QEP_INIT_TRAN' ? (f.state ?? f.target) : f.target;
  return typeof state === 'string' ? state : state === undefined || state === null ? null : String(state);
}

/** `master/channel`, the form summaries keep STP channels in. */
export const channelKey = (master: number, channel: number) => `${master}/${channel}`;

/** A field's value as Postgres's `json_each_text` gives it: strings bare, anything else as JSON. */
function keyValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** The dictionary entry a `dict` record defines, keyed by its fields other than `name` in their order. */
export function dictionaryEntryOf(r: BatchRecord): DictionaryEntry | undefined {
  if (r.kind !== 'dict' || typeof r.fields.name !== 'string') return undefined;
  let key = '';
  for (const k in r.fields) {
    if (k === 'name') continue;
    key += `${key === '' ? '' : ','}${k}=${keyValue(r.fields[k])}`;
  }
  return { kind: r.name, key, name: r.fields.name, seq: r.seq };
}

/** Compares two decimal integer strings by value. */
export function compareDecimal(a: string, b: string): number {
  if (a === b) return 0;
  const negA = a.startsWith('-');
  const negB = b.startsWith('-');
  if (negA || negB) return BigInt(a) < BigInt(b) ? -1 : 1;
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : 1;
}

/** The summary of records of one session, given in seq order (at least one). */
export function summarizeRecords(records: readonly BatchRecord[]): RecordsSummary {
  const first = records[0];
  const names = new Set<string>();
  const kinds = new Set<string>();
  const types = new Set<number>();
  const objs = new Set<string>();
  const sigs = new Set<string>();
  const prios = new Set<number>();
  const channels = new Set<string>();
  const dictionary = new Map<string, DictionaryEntry>();
  let states: Record<string, StateChange> | null = null;
  let targetInfo: RecordsSummary['targetInfo'] = null;
  let minHost = first.hostNs;
  let maxHost = first.hostNs;
  let minTs: string | null = null;
  let maxTs: string | null = null;
  let firstChunk = first.chunk;
  let lastChunk = first.chunk;
  let errors = 0;
  let gaps = 0;
  let lost = 0;
  const digest = new DigestBuilder();
  for (const r of records) {
    names.add(r.name);
    kinds.add(r.kind);
    types.add(r.type);
    // Records of one chunk share its receive time: most need no comparison at all.
    if (r.hostNs !== maxHost && r.hostNs !== minHost) {
      if (compareDecimal(r.hostNs, minHost) < 0) minHost = r.hostNs;
      else if (compareDecimal(r.hostNs, maxHost) > 0) maxHost = r.hostNs;
    }
    if (r.targetTs !== null) {
      if (minTs === null || compareDecimal(r.targetTs, minTs) < 0) minTs = r.targetTs;
      if (maxTs === null || compareDecimal(r.targetTs, maxTs) > 0) maxTs = r.targetTs;
    }
    if (r.chunk < firstChunk) firstChunk = r.chunk;
    else if (r.chunk > lastChunk) lastChunk = r.chunk;
    if (r.kind === 'error') {
      errors++;
      const lostBytes = r.fields.lostBytes;
      if (typeof lostBytes === 'number') lost += lostBytes;
    } else if (r.kind === 'dict') {
      const entry = dictionaryEntryOf(r);
      if (entry) dictionary.set(`${entry.kind}\u0000${entry.key}`, entry);
    } else if (r.name === RecordName.QS_TARGET_INFO && (targetInfo === null || r.seq > targetInfo.seq)) {
      targetInfo = { seq: r.seq, fields: r.fields };
    }
    if (r.name === RecordName.SEQ_GAP) gaps++;
    const qs = r.qs;
    if (qs) {
      if (qs.obj !== undefined) {
        objs.add(qs.obj);
        const state = stateOf(r);
        if (state !== null) {
          states ??= {};
          states[qs.obj] = { seq: r.seq, hostNs: r.hostNs, targetTs: r.targetTs, state };
        }
      }
      if (qs.sig !== undefined) sigs.add(qs.sig);
      if (qs.prio !== undefined) prios.add(qs.prio);
    }
    if (r.stp) channels.add(channelKey(r.stp.master, r.stp.channel));
    digest.add(r, stateOf(r));
  }
  return {
    firstSeq: first.seq,
    lastSeq: records[records.length - 1].seq,
    recordCount: records.length,
    minHostNs: minHost,
    maxHostNs: maxHost,
    minTargetTs: minTs,
    maxTargetTs: maxTs,
    firstChunk,
    lastChunk,
    errorCount: errors,
    gapCount: gaps,
    lostBytes: lost,
    names: [...names],
    kinds: [...kinds],
    types: [...types],
    objs: [...objs],
    sigs: [...sigs],
    prios: [...prios],
    channels: [...channels],
    states,
    dictionary: [...dictionary.values()],
    targetInfo,
    digest: digest.digest(),
    target: targetIndexOf(records),
    machines: machineTalliesOf(records),
  };
}

const union = <T>(a: readonly T[], b: readonly T[]): T[] => {
  if (b.length === 0) return [...a];
  const set = new Set(a);
  for (const v of b) set.add(v);
  return [...set];
};
const minOf = (a: string | null, b: string | null) =>
  a === null ? b : b === null ? a : compareDecimal(a, b) <= 0 ? a : b;
const maxOf = (a: string | null, b: string | null) =>
  a === null ? b : b === null ? a : compareDecimal(a, b) >= 0 ? a : b;

/** The summary of two runs of one session's records, `a` before `b` in seq order. */
export function mergeSummaries(a: RecordsSummary, b: RecordsSummary): RecordsSummary {
  let states = a.states;
  if (b.states) {
    states = { ...(a.states ?? {}) };
    for (const [obj, change] of Object.entries(b.states)) {
      const seen = states[obj];
      if (!seen || seen.seq < change.seq) states[obj] = change;
    }
  }
  const dictionary = new Map(a.dictionary.map((e) => [`${e.kind}\u0000${e.key}`, e]));
  for (const e of b.dictionary) {
    const id = `${e.kind}\u0000${e.key}`;
    const seen = dictionary.get(id);
    if (!seen || seen.seq < e.seq) dictionary.set(id, e);
  }
  return {
    firstSeq: Math.min(a.firstSeq, b.firstSeq),
    lastSeq: Math.max(a.lastSeq, b.lastSeq),
    recordCount: a.recordCount + b.recordCount,
    minHostNs: minOf(a.minHostNs, b.minHostNs)!,
    maxHostNs: maxOf(a.maxHostNs, b.maxHostNs)!,
    minTargetTs: minOf(a.minTargetTs, b.minTargetTs),
    maxTargetTs: maxOf(a.maxTargetTs, b.maxTargetTs),
    firstChunk: Math.min(a.firstChunk, b.firstChunk),
    lastChunk: Math.max(a.lastChunk, b.lastChunk),
    errorCount: a.errorCount + b.errorCount,
    gapCount: a.gapCount + b.gapCount,
    lostBytes: a.lostBytes + b.lostBytes,
    names: union(a.names, b.names),
    kinds: union(a.kinds, b.kinds),
    types: union(a.types, b.types),
    objs: union(a.objs, b.objs),
    sigs: union(a.sigs, b.sigs),
    prios: union(a.prios, b.prios),
    channels: union(a.channels, b.channels),
    states,
    dictionary: [...dictionary.values()],
    targetInfo: !b.targetInfo
      ? a.targetInfo
      : !a.targetInfo || a.targetInfo.seq < b.targetInfo.seq
        ? b.targetInfo
        : a.targetInfo,
    digest: mergeDigests(a.digest, b.digest),
    target: a.target && b.target ? mergeTargetIndexes(a.target, b.target) : undefined,
    machines:
      a.machines === undefined || b.machines === undefined ? undefined : mergeMachineTallies(a.machines, b.machines),
  };
}
