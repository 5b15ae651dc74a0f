// What the state machines of a QS capture are, counted from qspy's own output for it.
import { qspyLines } from './paths.js';

export interface ExpectedTransition {
  from: string | null;
  to: string;
  sig: string | null;
  kind: 'initial' | 'state-initial' | 'transition' | 'history' | 'entry-point' | 'exit-point';
  count: number;
}

export interface ExpectedState {
  name: string;
  entries: number;
  exits: number;
  internal: Array<{ sig: string; count: number }>;
  dispatched: Array<{ sig: string; count: number }>;
  ignored: Array<{ sig: string; count: number }>;
  unhandled: Array<{ sig: string; count: number }>;
}

export interface ExpectedMachine {
  obj: string;
  dispatched: number;
  states: ExpectedState[];
  transitions: ExpectedTransition[];
}

/** QP/C's top state: its initial transition is printed twice, as `St-Init QHsm_top->s` and as `Init===>`. */
const TOP = 'QHsm_top';

const KINDS: Record<string, ExpectedTransition['kind']> = {
  '===>Tran': 'transition',
  'St-Hist': 'history',
  'St-EP': 'entry-point',
  'St-XP': 'exit-point',
  'St-Init': 'state-initial',
};

const field = (line: string, name: string) => new RegExp(`[ ,]${name}=([^,]+)`).exec(line)?.[1];

/** Signal counts, most frequent first, then by name. */
const byCount = (m: Map<string, number>) =>
  [...m].map(([sig, count]) => ({ sig, count })).sort((a, b) => b.count - a.count || (a.sig < b.sig ? -1 : 1));

/**
 * Reads `<name>.qspy.txt` (the reference qspy's text of the capture): per object its states
 * (St-Entry, St-Exit, =>Intern, =>Ignore, St-Unhnd lines) and transitions (Init===>,
 * ===>Tran, St-Init from a state other than the top, St-Hist, St-EP, St-XP), counted;
 * Disp===> lines as dispatched (and per state, by signal). Machines by object name, states by name, transitions in
 * no particular order.
 */
export function qspyStateMachines(name: string): ExpectedMachine[] {
  const machines = new Map<
    string,
    {
      dispatched: number;
      states: Map<string, ExpectedState & { maps: Map<string, number>[] }>;
      tran: Map<string, ExpectedTransition>;
    }
  >();
  for (const line of qspyLines(name)) {
    const tokens = line.trim().split(/\s+/);
    const what = /^(\d+|===RTC===>)$/.test(tokens[0]) ? tokens[1] : tokens[0];
    const obj = field(line, 'Obj');
    if (obj === undefined) continue;
    let m = machines.get(obj);
    const ensure = () => {
      if (!m) machines.set(obj, (m = { dispatched: 0, states: new Map(), tran: new Map() }));
      return m;
    };
    const state = (n: string) => {
      const states = ensure().states;
      let s = states.get(n);
      if (!s) {
        const maps = [
          new Map<string, number>(),
          new Map<string, number>(),
          new Map<string, number>(),
          new Map<string, number>(),
        ];
        states.set(
          n,
          (s = { name: n, entries: 0, exits: 0, internal: [], dispatched: [], ignored: [], unhandled: [], maps }),
        );
      }
      return s;
    };
    const stateField = field(line, 'State');
    const sig = field(line, 'Sig');
    const tran = (kind: ExpectedTransition['kind'], from: string | null, to: string, s: string | null) => {
      const key = `${kind}/${from}/${to}/${s}`;
      const t = ensure().tran.get(key);
      if (t) t.count++;
      else ensure().tran.set(key, { from, to, sig: s, kind, count: 1 });
      if (from !== null) state(from);
      state(to);
    };
    if (what === 'Disp===>') {
      ensure().dispatched++;
      const map = state(stateField!).maps[3];
      map.set(sig!, (map.get(sig!) ?? 0) + 1);
    } else if (what === 'St-Entry') state(stateField!).entries++;
    else if (what === 'St-Exit') state(stateField!).exits++;
    else if (what === '=>Intern' || what === '=>Ignore' || what === 'St-Unhnd') {
      const map = state(stateField!).maps[what === '=>Intern' ? 0 : what === '=>Ignore' ? 1 : 2];
      map.set(sig!, (map.get(sig!) ?? 0) + 1);
    } else if (what === 'Init===>') tran('initial', null, stateField!, null);
    else if (KINDS[what]) {
      const [from, to] = stateField!.split('->');
      if (what === 'St-Init' && from === TOP) continue;
      tran(KINDS[what], from, to, what === '===>Tran' ? sig! : null);
    }
  }
  return [...machines]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([obj, m]) => ({
      obj,
      dispatched: m.dispatched,
      states: [...m.states.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map(({ maps, ...s }) => ({
          ...s,
          internal: byCount(maps[0]),
          dispatched: byCount(maps[3]),
          ignored: byCount(maps[1]),
          unhandled: byCount(maps[2]),
        })),
      transitions: [...m.tran.values()],
    }));
}
