import type { BatchRecord } from './record.js';
import { STATE_MACHINE_RECORD_NAMES, TRANSITION_RECORD_NAMES, type TransitionKind } from './record-names.js';

/**
 * What a run of QEP records says of each object's state machine, counted, in the form a
 * stored block's summary keeps it: the state-machine view adds up the blocks' tallies instead
 * of reading their records.
 */
export interface StateTally {
  entries: number;
  exits: number;
  /** By signal. */
  internal: Record<string, number>;
  dispatched: Record<string, number>;
  ignored: Record<string, number>;
  unhandled: Record<string, number>;
}

export interface MachineTally {
  /** QEP records counted. */
  records: number;
  /** QS_QEP_DISPATCH records. */
  dispatched: number;
  states: Record<string, StateTally>;
  /** Counts by `transitionKey`. */
  transitions: Record<string, number>;
}

/** Per object. */
export type MachineTallies = Record<string, MachineTally>;

/** Separates the parts of a transition's key (jsonb takes no NUL). */
const SEP = '\u001f';

/** A transition's key in `MachineTally.transitions`: kind, from ('' for none), to, signal ('' for none). */
export const transitionKey = (kind: TransitionKind, from: string | null, to: string, sig: string | null) =>
  `${kind}${SEP}${from ?? ''}${SEP}${to}${SEP}${sig ?? ''}`;

/** A transition key's parts. */
export function transitionOfKey(key: string): {
  kind: TransitionKind;
  from: string | null;
  to: string;
  sig: string | null;
} {
  const [kind, from, to, sig] = key.split(SEP);
  return { kind: kind as TransitionKind, from: from === '' ? null : from, to, sig: sig === '' ? null : sig };
}

const QEP = new Set(STATE_MACHINE_RECORD_NAMES);

/** A transition's kind by the record that recorded it. */
const TRANSITION_KINDS = new Map<string, TransitionKind>(
  Object.entries(TRANSITION_RECORD_NAMES).map(([kind, name]) => [name, kind as TransitionKind]),
);

/** A field's value as a name (functions and signals are numbers when no dictionary named them). */
const nameOf = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));

/**
 * A state's name: its function's dictionary name, or its address as qspy prints one no
 * dictionary named (`0x00402FEA`: upper-case hex, at least 8 digits), whatever the pointer size
 * the record's field was written with (`0x0000000000402FEA`).
 */
export const stateNameOf = (v: unknown): string | null => {
  const name = nameOf(v);
  if (name === null) return null;
  // A machine has few states, named on every QEP record: each spelling is worked out once.
  let known = stateNames.get(name);
  if (known === undefined) {
    known = /^0x[0-9A-Fa-f]+$/.test(name) ? `0x${BigInt(name).toString(16).toUpperCase().padStart(8, '0')}` : name;
    if (stateNames.size >= 4096) stateNames.clear();
    stateNames.set(name, known);
  }
  return known;
};
const stateNames = new Map<string, string>();

const newMachine = (): MachineTally => ({ records: 0, dispatched: 0, states: {}, transitions: {} });

function stateIn(m: MachineTally, name: string): StateTally {
  let s = m.states[name];
  if (!s) m.states[name] = s = { entries: 0, exits: 0, internal: {}, dispatched: {}, ignored: {}, unhandled: {} };
  return s;
}

const bump = (m: Record<string, number>, key: string, by = 1) => {
  m[key] = (m[key] ?? 0) + by;
};

/** Counts `r` into `tallies` when it is a QEP record of an object; true when it was. */
export function tallyMachineRecord(tallies: MachineTallies, r: BatchRecord): boolean {
  const obj = r.qs?.obj;
  if (obj === undefined || !QEP.has(r.name)) return false;
  let m = tallies[obj];
  if (!m) tallies[obj] = m = newMachine();
  m.records++;
  const f = r.fields;
  const sig = nameOf(f.sig) ?? '?';
  switch (r.name) {
    case 'QS_QEP_DISPATCH': {
      m.dispatched++;
      // The state the event found the machine in: a state even where no record entered it
      // (a machine that never leaves its first state, or joined mid-stream).
      const state = stateNameOf(f.state);
      if (state !== null) bump(stateIn(m, state).dispatched, sig);
      return true;
    }
    case 'QS_QEP_STATE_ENTRY':
    case 'QS_QEP_STATE_EXIT': {
      const state = stateNameOf(f.state);
      if (state === null) return true;
      if (r.name === 'QS_QEP_STATE_ENTRY') stateIn(m, state).entries++;
      else stateIn(m, state).exits++;
      return true;
    }
    case 'QS_QEP_INTERN_TRAN':
    case 'QS_QEP_IGNORED':
    case 'QS_QEP_UNHANDLED': {
      const state = stateNameOf(f.state);
      if (state === null) return true;
      const s = stateIn(m, state);
      bump(r.name === 'QS_QEP_INTERN_TRAN' ? s.internal : r.name === 'QS_QEP_IGNORED' ? s.ignored : s.unhandled, sig);
      return true;
    }
    case 'QS_QEP_INIT_TRAN': {
      const to = stateNameOf(f.state ?? f.target);
      if (to !== null) bump(m.transitions, transitionKey('initial', null, to, null));
      return true;
    }
    default: {
      const kind = TRANSITION_KINDS.get(r.name);
      const from = stateNameOf(f.source);
      const to = stateNameOf(f.target);
      if (kind === undefined || from === null || to === null) return true;
      bump(m.transitions, transitionKey(kind, from, to, kind === 'state-initial' ? null : nameOf(f.sig)));
      return true;
    }
  }
}

/** The tallies of a run of records; null when none is a QEP record of an object. */
export function machineTalliesOf(records: readonly BatchRecord[]): MachineTallies | null {
  const tallies: MachineTallies = {};
  let any = false;
  for (const r of records) if (tallyMachineRecord(tallies, r)) any = true;
  return any ? tallies : null;
}

const addCounts = (into: Record<string, number>, from: Record<string, number>) => {
  for (const k in from) bump(into, k, from[k]);
};

/** Adds `b` into `into` (which it changes and returns). */
export function addMachineTallies(into: MachineTallies, b: MachineTallies): MachineTallies {
  for (const obj in b) {
    const from = b[obj];
    let m = into[obj];
    if (!m) into[obj] = m = newMachine();
    m.records += from.records;
    m.dispatched += from.dispatched;
    for (const name in from.states) {
      const s = stateIn(m, name);
      const t = from.states[name];
      s.entries += t.entries;
      s.exits += t.exits;
      addCounts(s.internal, t.internal);
      addCounts(s.dispatched, t.dispatched);
      addCounts(s.ignored, t.ignored);
      addCounts(s.unhandled, t.unhandled);
    }
    addCounts(m.transitions, from.transitions);
  }
  return into;
}

/** The tallies of two runs (either null: no QEP records); neither is changed. */
export function mergeMachineTallies(a: MachineTallies | null, b: MachineTallies | null): MachineTallies | null {
  if (a === null) return b;
  if (b === null) return a;
  return addMachineTallies(addMachineTallies({}, a), b);
}
