import type { SessionStateMachines, SignalCount, StateMachine } from '@tracehub/api-contract';
import { TRANSITION_RECORD_NAMES } from '@tracehub/contracts/record-names';
import { getJson } from '../api.js';
import { h, headRow, legend } from '../dom.js';
import { download } from '../download.js';
import { drawStateMachine } from '../state-machine-view.js';
import { svgFile } from '../svg.js';
import { writeViewState } from '../view-state.js';

const signals = (counts: SignalCount[]) => counts.map((c) => `${c.sig} ×${c.count}`).join(', ');

/**
 * The state machines of a QS session's objects: a link per object, then the chosen one's
 * diagram (states and the transitions seen, counted), its transitions and its states as
 * tables whose counts open the records they count. The object is in the URL (`obj=`).
 */
export function stateMachinesSection(root: HTMLElement, id: string, params: URLSearchParams): void {
  const enc = encodeURIComponent(id);
  root.replaceChildren(h('p', { class: 'status', id: 'sm-status' }, 'counting the state-machine records…'));
  void (async () => {
    try {
      const data = await getJson<SessionStateMachines>(`/sessions/${enc}/state-machines`);
      if (data.machines.length === 0) {
        root.replaceChildren(
          h('p', { class: 'status', id: 'sm-status' }, 'No state-machine (QEP) records in this session.'),
        );
        return;
      }
      const chosen = data.machines.find((m) => m.obj === params.get('obj')) ?? data.machines[0];
      writeViewState(`session/${enc}`, new URLSearchParams({ view: 'states', obj: chosen.obj }));
      const objects = h(
        'nav',
        { class: 'objects', id: 'sm-objects' },
        'object:',
        ...data.machines.map((m) =>
          h(
            'a',
            {
              href: `#/session/${enc}?view=states&obj=${encodeURIComponent(m.obj)}`,
              class: m === chosen ? 'sm-object active' : 'sm-object',
              'data-obj': m.obj,
              title: `${m.states.length} states, ${m.transitions.reduce((n, t) => n + t.count, 0)} transitions, ${m.dispatched} events dispatched`,
            },
            m.obj,
          ),
        ),
      );
      root.replaceChildren(objects, ...machineView(id, chosen));
    } catch (e) {
      root.replaceChildren(h('p', { class: 'problem' }, (e as Error).message));
    }
  })();
}

/** One object's diagram and tables. */
function machineView(id: string, m: StateMachine): HTMLElement[] {
  const records = (q: Record<string, string>) =>
    `#/search?${new URLSearchParams({ session: id, obj: m.obj, ...q, order: 'asc' })}`;
  const diagram = drawStateMachine(m);
  const transitions = m.transitions.reduce((n, t) => n + t.count, 0);
  const bar = h(
    'div',
    { class: 'bar' },
    h(
      'span',
      { class: 'status', id: 'sm-summary' },
      `${m.obj}: ${m.states.length} states, ${transitions} transitions, ${m.dispatched} events dispatched`,
    ),
    h('span', { class: 'spacer' }),
    h(
      'button',
      { type: 'button', id: 'sm-svg', onclick: () => download(`${id}-${m.obj}-states.svg`, svgFile(diagram)) },
      'download SVG',
    ),
  );
  const kinds = legend([
    ['l-tran', '→ transition: signal ×times (thicker: more often)'],
    ['l-init', '● → initial transition'],
    ['l-other', '⇢ history, entry or exit point'],
    ['', 'in a state: internal transitions'],
  ]);
  const tranTable = h(
    'table',
    { class: 'fleet sm-transitions', id: 'sm-transitions' },
    headRow(['from', 'to', 'signal', 'kind', 'times']),
    ...m.transitions.map((t) =>
      h(
        'tr',
        { 'data-from': t.from ?? '', 'data-to': t.to, 'data-sig': t.sig ?? '', 'data-kind': t.kind },
        h('td', {}, t.from ?? '●'),
        h('td', {}, t.to),
        h('td', {}, t.sig ?? ''),
        h('td', {}, t.kind.replace('-', ' ')),
        h(
          'td',
          { class: 'num', 'data-col': 'count' },
          h(
            'a',
            { href: records({ name: TRANSITION_RECORD_NAMES[t.kind], ...(t.sig ? { sig: t.sig } : {}) }) },
            String(t.count),
          ),
        ),
      ),
    ),
  );
  const stateTable = h(
    'table',
    { class: 'fleet sm-states', id: 'sm-states' },
    headRow([
      'state',
      'entered',
      'exited',
      'events dispatched',
      'internal transitions',
      'ignored',
      'turned away by a guard',
    ]),
    ...m.states.map((s) =>
      h(
        'tr',
        { 'data-state': s.name },
        h('td', {}, s.name),
        h('td', { class: 'num', 'data-col': 'entries' }, String(s.entries)),
        h('td', { class: 'num', 'data-col': 'exits' }, String(s.exits)),
        h('td', { 'data-col': 'dispatched' }, signals(s.dispatched)),
        h('td', { 'data-col': 'internal' }, signals(s.internal)),
        h('td', { 'data-col': 'ignored' }, signals(s.ignored)),
        h('td', { 'data-col': 'unhandled' }, signals(s.unhandled)),
      ),
    ),
  );
  return [
    bar,
    kinds,
    h('div', { class: 'diagram sm-diagram', id: 'state-machine' }, diagram),
    h(
      'div',
      { class: 'sm-tables' },
      h('div', {}, h('h4', { class: 'sm-title' }, 'Transitions'), tranTable),
      h('div', {}, h('h4', { class: 'sm-title' }, 'States'), stateTable),
    ),
  ];
}
