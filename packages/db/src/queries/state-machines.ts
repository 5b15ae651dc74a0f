import {
  STATE_MACHINE_RECORD_NAMES,
  TRANSITION_RECORD_NAMES,
  type TraceRecord,
  type TransitionKind,
} from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import { ScanBudget } from './block-reader.js';
import { forEachSessionRecord } from './session-blocks.js';

/** One transition of a state machine as the records show it, counted. */
export interface TransitionCount {
  /** The state the transition leaves from; null for the machine's initial transition. */
  from: string | null;
  to: string;
  /** The signal that triggered it; null for initial transitions. */
  sig: string | null;
  kind: TransitionKind;
  count: number;
}

/** A signal and how often it was seen. */
export interface SignalCount {
  sig: string;
  count: number;
}

/** One state of a state machine and what happened in it. */
export interface StateCounts {
  name: string;
  /** QS_QEP_STATE_ENTRY and QS_QEP_STATE_EXIT records of the state. */
  entries: number;
  exits: number;
  /** Events the state handled without leaving (QS_QEP_INTERN_TRAN), by signal. */
  internal: SignalCount[];
  /** Events dispatched to the machine while it was in the state (QS_QEP_DISPATCH), by signal. */
  dispatched: SignalCount[];
  /** Events the machine ignored while in the state (QS_QEP_IGNORED), by signal. */
  ignored: SignalCount[];
  /** Events a guard of the state turned away (QS_QEP_UNHANDLED), by signal. */
  unhandled: SignalCount[];
}

/** An active object's (or any QEP object's) state machine: its states and transitions seen. */
export interface StateMachine {
  obj: string;
  /** QS_QEP_DISPATCH records: events dispatched to it. */
  dispatched: number;
  /** States by name; the machine's top state (left by its initial transitions only) is not one. */
  states: StateCounts[];
  /** Most frequent first. */
  transitions: TransitionCount[];
}

export interface SessionStateMachines {
  /** QEP records counted (those of the object asked for, with `obj`). */
  records: number;
  machines: StateMachine[];
}

export interface StateMachinesOptions {
  /** Only this object's machine. */
  obj?: string;
  /** What the query may read (default: `ScanBudget`'s default); over it, `ScanLimitError`. */
  budget?: ScanBudget;
}

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
const stateNameOf = (v: unknown): string | null => {
  const name = nameOf(v);
  if (name === null || !/^0x[0-9A-Fa-f]+$/.test(name)) return name;
  return `0x${BigInt(name).toString(16).toUpperCase().padStart(8, '0')}`;
};

interface StateTally {
  entries: number;
  exits: number;
  internal: Map<string, number>;
  dispatched: Map<string, number>;
  ignored: Map<string, number>;
  unhandled: Map<string, number>;
}

class MachineTally {
  dispatched = 0;
  readonly states = new Map<string, StateTally>();
  /** By `kind from to sig`. */
  readonly transitions = new Map<string, TransitionCount>();

  state(name: string): StateTally {
    let s = this.states.get(name);
    if (!s)
      this.states.set(
        name,
        (s = {
          entries: 0,
          exits: 0,
          internal: new Map(),
          dispatched: new Map(),
          ignored: new Map(),
          unhandled: new Map(),
        }),
      );
    return s;
  }

  transition(kind: TransitionKind, from: string | null, to: string, sig: string | null): void {
    const key = `${kind}\u0000${from ?? ''}\u0000${to}\u0000${sig ?? ''}`;
    const t = this.transitions.get(key);
    if (t) t.count++;
    else this.transitions.set(key, { from, to, sig, kind, count: 1 });
  }

  count(r: TraceRecord): void {
    const f = r.fields;
    const sig = nameOf(f.sig) ?? '?';
    const bump = (m: Map<string, number>) => m.set(sig, (m.get(sig) ?? 0) + 1);
    switch (r.name) {
      case 'QS_QEP_DISPATCH': {
        this.dispatched++;
        // The state the event found the machine in: a state even where no record entered it
        // (a machine that never leaves its first state, or joined mid-stream).
        const state = stateNameOf(f.state);
        if (state !== null) bump(this.state(state).dispatched);
        return;
      }
      case 'QS_QEP_STATE_ENTRY':
      case 'QS_QEP_STATE_EXIT': {
        const state = stateNameOf(f.state);
        if (state === null) return;
        if (r.name === 'QS_QEP_STATE_ENTRY') this.state(state).entries++;
        else this.state(state).exits++;
        return;
      }
      case 'QS_QEP_INTERN_TRAN':
      case 'QS_QEP_IGNORED':
      case 'QS_QEP_UNHANDLED': {
        const state = stateNameOf(f.state);
        if (state === null) return;
        const s = this.state(state);
        bump(r.name === 'QS_QEP_INTERN_TRAN' ? s.internal : r.name === 'QS_QEP_IGNORED' ? s.ignored : s.unhandled);
        return;
      }
      case 'QS_QEP_INIT_TRAN': {
        const to = stateNameOf(f.state ?? f.target);
        if (to !== null) this.transition('initial', null, to, null);
        return;
      }
      default: {
        const kind = TRANSITION_KINDS.get(r.name);
        const from = stateNameOf(f.source);
        const to = stateNameOf(f.target);
        if (kind === undefined || from === null || to === null) return;
        this.transition(kind, from, to, kind === 'state-initial' ? null : nameOf(f.sig));
      }
    }
  }

  /**
   * The machine as the page draws it. QP records the initial transition of the whole machine
   * twice: as QS_QEP_STATE_INIT from the top state (a state no record enters, leaves or acts
   * in) and as QS_QEP_INIT_TRAN; only the latter is kept.
   */
  result(obj: string): StateMachine {
    const known = new Set(this.states.keys());
    for (const t of this.transitions.values()) {
      if (t.kind !== 'state-initial' && t.from !== null) known.add(t.from);
      known.add(t.to);
    }
    const transitions = [...this.transitions.values()]
      .filter((t) => t.kind !== 'state-initial' || known.has(t.from!))
      .sort((a, b) => b.count - a.count || order(a, b));
    for (const t of transitions) {
      if (t.from !== null) this.state(t.from);
      this.state(t.to);
    }
    const counts = (m: Map<string, number>) =>
      [...m].map(([sig, count]) => ({ sig, count })).sort((a, b) => b.count - a.count || (a.sig < b.sig ? -1 : 1));
    return {
      obj,
      dispatched: this.dispatched,
      states: [...this.states]
        .map(([name, s]) => ({
          name,
          entries: s.entries,
          exits: s.exits,
          internal: counts(s.internal),
          dispatched: counts(s.dispatched),
          ignored: counts(s.ignored),
          unhandled: counts(s.unhandled),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      transitions,
    };
  }
}

/** Transitions of equal count in a fixed order: kind, from, to, signal. */
function order(a: TransitionCount, b: TransitionCount): number {
  const ka = `${a.kind}\u0000${a.from ?? ''}\u0000${a.to}\u0000${a.sig ?? ''}`;
  const kb = `${b.kind}\u0000${b.from ?? ''}\u0000${b.to}\u0000${b.sig ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * The state machines of a QS session's objects, from its QEP records: per object its states
 * (entries, exits, internal transitions, ignored and unhandled events, by signal) and the
 * transitions seen between them, by signal, counted. Only blocks whose summary names a QEP
 * record (of `obj`, when given) are decoded, under a budget, on one snapshot.
 */
export async function sessionStateMachines(
  db: Kysely<Database>,
  session: string,
  opts: StateMachinesOptions = {},
): Promise<SessionStateMachines> {
  const machines = new Map<string, MachineTally>();
  const qep = new Set(STATE_MACHINE_RECORD_NAMES);
  let records = 0;
  const count = (r: TraceRecord) => {
    const obj = r.qs?.obj;
    if (!qep.has(r.name) || obj === undefined || (opts.obj !== undefined && obj !== opts.obj)) return;
    let m = machines.get(obj);
    if (!m) machines.set(obj, (m = new MachineTally()));
    m.count(r);
    records++;
  };
  await forEachSessionRecord(db, session, opts.budget ?? new ScanBudget(), count, (blocks) => {
    const qepBlocks = blocks.where(sql<boolean>`names && ${STATE_MACHINE_RECORD_NAMES}::text[]`);
    return opts.obj === undefined ? qepBlocks : qepBlocks.where(sql<boolean>`${opts.obj} = any(objs)`);
  });
  return {
    records,
    machines: [...machines].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([obj, m]) => m.result(obj)),
  };
}
