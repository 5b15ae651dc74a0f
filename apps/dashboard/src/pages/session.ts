import { EXPORT_FORMATS, exportFormatLabel } from '@tracehub/contracts/export-formats';
import { getJson, type Session, streamUrl } from '../api.js';
import { channelTree, type SessionChannelsAnswer } from '../channel-tree.js';
import { h, legend } from '../dom.js';
import { download } from '../download.js';
import { toMermaid, toPlantUml } from '../sequence-text.js';
import { type Diagram, drawSequence } from '../sequence-view.js';
import { svgFile } from '../svg.js';
import { targetInfoTable } from '../target-info.js';
import { writeViewState } from '../view-state.js';
import { stateMachinesSection } from './session-states.js';
import { duration } from './sessions.js';

const STEPS_PER_PAGE = 2000;
const ZOOMS = [0.4, 0.55, 0.7, 0.85, 1, 1.25, 1.6, 2];

/**
 * A session: what it is (link, span, counts, target info as a table), its exports, and its
 * views: the sequence diagram (QS), the state machines of its active objects (QS), the
 * timeline, the STP master/channel tree. The view, its page and zoom are in the URL.
 */
export function sessionPage(root: HTMLElement, id: string, params: URLSearchParams): () => void {
  const enc = encodeURIComponent(id);
  const info = h('div', { class: 'session-info' }, 'loading…');
  const body = h('div', { class: 'session-view' });
  root.append(h('h2', {}, `Session ${id}`), info, body);
  let stop = () => {};
  void (async () => {
    try {
      const s = await getJson<Session>(`/sessions/${enc}`);
      const exports = EXPORT_FORMATS.map((f) =>
        h(
          'a',
          { href: streamUrl(`/sessions/${enc}/export`, new URLSearchParams({ format: f })), class: 'export' },
          ` ${exportFormatLabel(f, s.protocol)}`,
        ),
      );
      const summary = h(
        'table',
        { class: 'kv summary' },
        h('tr', {}, h('th', {}, 'link'), h('td', {}, `${s.rig} / ${s.link} (${s.protocol})`)),
        h(
          'tr',
          {},
          h('th', {}, 'span'),
          h(
            'td',
            {},
            `${(s.firstRecordAt ?? s.startedAt).replace('T', ' ')} → ${(s.lastRecordAt ?? '…').replace('T', ' ')} · ${duration(s.firstRecordAt ?? s.startedAt, s.lastRecordAt)}`,
          ),
        ),
        h(
          'tr',
          {},
          h('th', {}, 'records'),
          h(
            'td',
            {},
            h('a', { href: `#/search?session=${enc}` }, `${s.records.toLocaleString('en')} records`),
            ' · ',
            h('a', { href: `#/search?session=${enc}&kind=error`, class: s.errors ? 'bad' : '' }, `${s.errors} errors`),
            ` · ${s.gaps} gaps · ${s.lostBytes} bytes lost`,
          ),
        ),
        h('tr', {}, h('th', {}, 'state'), h('td', {}, s.endedAt ? (s.complete ? 'ended, complete' : 'ended') : 'open')),
        h('tr', {}, h('th', {}, 'export'), h('td', { id: 'session-exports' }, ...exports)),
      );
      const views: Array<[string, string]> =
        s.protocol === 'qs'
          ? [
              ['sequence', 'Sequence diagram'],
              ['states', 'State machines'],
            ]
          : [['channels', 'Masters and channels']];
      const view = views.some(([v]) => v === params.get('view')) ? params.get('view')! : views[0][0];
      const tabs = h(
        'nav',
        { class: 'tabs' },
        ...views.map(([v, label]) =>
          h('a', { href: `#/session/${enc}?view=${v}`, class: v === view ? 'active' : '' }, label),
        ),
        // The target's clock first, as the firmware reads it; host time (arrival) beside it.
        h('a', { href: `#/timeline?session=${enc}&axis=target`, id: 'session-timeline' }, 'Timeline ↗'),
        h('a', { href: `#/timeline?session=${enc}`, id: 'session-host-timeline' }, 'Host-time timeline ↗'),
        h('a', { href: `#/plot?session=${enc}` }, 'Value plots ↗'),
      );
      info.replaceChildren(
        h(
          'div',
          { class: 'session-head' },
          summary,
          s.targetInfo ? h('div', {}, h('h4', {}, 'Target'), targetInfoTable(s.targetInfo)) : '',
        ),
        tabs,
      );
      if (view === 'sequence') stop = sequenceSection(body, id, params);
      else if (view === 'channels') channelsSection(body, s, params);
      else stateMachinesSection(body, id, params);
    } catch (e) {
      info.replaceChildren(h('p', { class: 'problem' }, (e as Error).message));
    }
  })();
  return () => stop();
}

/**
 * The STP master/channel tree with the stream's errors above it; the folded masters are in
 * the URL. A channel opens its records on the STP page (the search page for SWD sessions,
 * which the STP page's protocol filter would leave out).
 */
function channelsSection(root: HTMLElement, s: Session, params: URLSearchParams): void {
  const enc = encodeURIComponent(s.id);
  const status = h('p', { class: 'status' }, 'counting the records of every master and channel…');
  root.replaceChildren(status);
  const collapsed = new Set(
    (params.get('collapsed') ?? '')
      .split(',')
      .filter((m) => m !== '')
      .map(Number),
  );
  const save = (folded: Set<number>) => {
    const p = new URLSearchParams({ view: 'channels' });
    if (folded.size) p.set('collapsed', [...folded].sort((a, b) => a - b).join(','));
    writeViewState(`session/${enc}`, p);
  };
  void (async () => {
    try {
      const data = await getJson<SessionChannelsAnswer>(`/sessions/${enc}/channels`);
      const recordsPath = s.protocol === 'stp' ? 'stp' : 'search';
      root.replaceChildren(channelTree(data, { recordsPath, collapsed, onToggle: save }));
    } catch (e) {
      root.replaceChildren(h('p', { class: 'problem' }, (e as Error).message));
    }
  })();
}

/** The sequence diagram: a page of steps, zoom, paging, exports; its state in the URL. */
function sequenceSection(root: HTMLElement, id: string, params: URLSearchParams): () => void {
  const enc = encodeURIComponent(id);
  let zoomIndex = Math.max(0, ZOOMS.indexOf(Number(params.get('zoom') ?? 1)));
  if (!params.has('zoom')) zoomIndex = ZOOMS.indexOf(1);
  let after = Number(params.get('after') ?? -1);
  const pages: number[] = [];
  let diagram: Diagram | undefined;
  const box = h('div', { class: 'diagram', id: 'sequence' });
  const status = h('span', { class: 'status', id: 'sequence-status' });
  const button = (label: string, idAttr: string, onclick: () => void, title = '') =>
    h('button', { type: 'button', id: idAttr, title, onclick }, label);
  const prev = button('← previous', 'seq-prev', () => {
    after = pages.pop() ?? -1;
    void load();
  });
  const next = button(`next ${STEPS_PER_PAGE} steps →`, 'seq-next', () => {
    if (!diagram?.nextAfter) return;
    pages.push(after);
    after = diagram.nextAfter;
    void load();
  });
  const save = () => {
    const p = new URLSearchParams({ view: 'sequence' });
    if (ZOOMS[zoomIndex] !== 1) p.set('zoom', String(ZOOMS[zoomIndex]));
    if (after >= 0) p.set('after', String(after));
    writeViewState(`session/${enc}`, p);
  };
  const draw = () => {
    if (!diagram) return;
    const left = box.scrollLeft;
    const top = box.scrollTop;
    const svgEl = drawSequence(diagram, ZOOMS[zoomIndex]);
    box.replaceChildren(svgEl);
    box.scrollLeft = left;
    box.scrollTop = top;
    pin();
    save();
  };
  // The participants' heads stay in view while scrolling down, the time axis while scrolling across.
  const pin = () => {
    const head = box.querySelector<SVGGElement>('g.head');
    const axis = box.querySelector<SVGGElement>('g.axis');
    head?.setAttribute('transform', `translate(0 ${box.scrollTop})`);
    axis?.setAttribute('transform', `translate(${box.scrollLeft} 0)`);
  };
  box.addEventListener('scroll', pin);
  const zoom = (by: number) => {
    zoomIndex = Math.min(ZOOMS.length - 1, Math.max(0, zoomIndex + by));
    draw();
  };
  box.addEventListener(
    'wheel',
    (e) => {
      if (!e.ctrlKey) return;
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1 : -1);
    },
    { passive: false },
  );
  const load = async () => {
    status.textContent = 'loading…';
    try {
      diagram = await getJson<Diagram>(`/sessions/${enc}/sequence?limit=${STEPS_PER_PAGE}&after=${after}`);
      const first = diagram.steps[0]?.seq;
      const last = diagram.steps.at(-1)?.seq;
      status.textContent = `${diagram.steps.length} steps (records ${first ?? '–'}…${last ?? '–'}), ${diagram.participants.length} lifelines${diagram.truncated ? ', more follow' : ''}`;
      next.toggleAttribute('disabled', diagram.nextAfter === null);
      prev.toggleAttribute('disabled', after < 0);
      draw();
    } catch (e) {
      box.replaceChildren(h('p', { class: 'problem' }, (e as Error).message));
      status.textContent = '';
    }
  };
  // The drawing as a file, its pinned head and axis back in place.
  const downloadSvg = () => {
    const svgEl = box.querySelector('svg');
    if (!svgEl) return;
    const copy = svgEl.cloneNode(true) as SVGSVGElement;
    for (const g of copy.querySelectorAll('g.head, g.axis')) g.removeAttribute('transform');
    download(`${id}-sequence.svg`, svgFile(copy));
  };
  const text = (body: string) => new Blob([body], { type: 'text/plain' });
  const toolbar = h(
    'div',
    { class: 'bar' },
    prev,
    next,
    button('−', 'seq-zoom-out', () => zoom(-1), 'zoom out (ctrl+wheel)'),
    button('+', 'seq-zoom-in', () => zoom(1), 'zoom in (ctrl+wheel)'),
    status,
    h('span', { class: 'spacer' }),
    'download:',
    button('SVG', 'seq-svg', downloadSvg),
    button('PlantUML', 'seq-plantuml', () => diagram && download(`${id}-sequence.puml`, text(toPlantUml(diagram)))),
    button('Mermaid', 'seq-mermaid', () => diagram && download(`${id}-sequence.mmd`, text(toMermaid(diagram)))),
  );
  const kinds = legend([
    ['l-post', '→ post'],
    ['l-publish', '● publish to its subscribers'],
    ['l-timeout', '⇢ time event'],
    ['l-init', '⇒ initial transition'],
    ['l-tran', 'a → b transition'],
  ]);
  root.append(toolbar, kinds, box);
  void load();
  return () => {};
}
