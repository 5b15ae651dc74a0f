import { getJson, streamUrl } from '../api.js';
import { h } from '../dom.js';

interface Session {
  id: string;
  rig: string;
  link: string;
  protocol: string;
  startedAt: string;
  endedAt: string | null;
  firstRecordAt: string | null;
  lastRecordAt: string | null;
  records: number;
  errors: number;
  gaps: number;
  complete: boolean;
  targetInfo: Record<string, unknown> | null;
}

interface Step {
  kind: 'post' | 'publish' | 'timeout' | 'state';
  seq: number;
  targetTs: string | null;
  from: string | null;
  to: string;
  sig: string | null;
  obj?: string;
}

interface Diagram {
  participants: string[];
  steps: Step[];
  truncated: boolean;
}

const SVG = 'http://www.w3.org/2000/svg';
const LANE = 150;
const ROW = 20;
const TOP = 50;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * A session: its target info and counts, export links, and the sequence diagram of the events
 * exchanged between active objects with each object's state changes on its lifeline.
 */
export function sessionPage(root: HTMLElement, id: string): () => void {
  const info = h('div', { class: 'session-info' }, 'loading…');
  const diagramBox = h('div', { class: 'diagram', id: 'sequence' });
  root.append(h('h2', {}, `Session ${id}`), info, h('h3', {}, 'Sequence diagram'), diagramBox);
  void (async () => {
    try {
      const s = await getJson<Session>(`/sessions/${encodeURIComponent(id)}`);
      const exports = ['qspy', 'ndjson', 'csv', 'raw'].map((f) =>
        h(
          'a',
          { href: streamUrl(`/sessions/${encodeURIComponent(id)}/export`, new URLSearchParams({ format: f })) },
          ` ${f}`,
        ),
      );
      info.replaceChildren(
        h(
          'p',
          {},
          `${s.rig}/${s.link} (${s.protocol}) · ${s.records} records · ${s.errors} errors · ${s.gaps} gaps · `,
          `${s.firstRecordAt ?? '?'} → ${s.lastRecordAt ?? '?'}${s.complete ? ' · complete' : ''}`,
        ),
        h(
          'p',
          {},
          'export:',
          ...exports,
          ' · ',
          h('a', { href: `#/search?session=${encodeURIComponent(id)}` }, 'records'),
        ),
        s.targetInfo ? h('pre', { class: 'target-info' }, JSON.stringify(s.targetInfo, null, 1)) : '',
      );
      if (s.protocol !== 'qs') {
        diagramBox.textContent = 'Sequence diagrams are drawn from QS sessions.';
        return;
      }
      const d = await getJson<Diagram>(`/sessions/${encodeURIComponent(id)}/sequence?limit=3000`);
      diagramBox.replaceChildren(drawSequence(d));
    } catch (e) {
      info.textContent = (e as Error).message;
    }
  })();
  return () => {};
}

function drawSequence(d: Diagram): SVGSVGElement {
  const x = new Map(d.participants.map((p, i) => [p, 80 + i * LANE]));
  const width = 80 + d.participants.length * LANE;
  const height = TOP + d.steps.length * ROW + 30;
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'sequence' });
  const defs = svg('defs', {});
  const marker = svg('marker', { id: 'arrow', markerWidth: 8, markerHeight: 8, refX: 7, refY: 4, orient: 'auto' });
  marker.append(svg('path', { d: 'M0,0 L8,4 L0,8 z', fill: '#345' }));
  defs.append(marker);
  root.append(defs);
  for (const p of d.participants) {
    const px = x.get(p)!;
    root.append(svg('line', { x1: px, y1: TOP - 10, x2: px, y2: height - 10, class: 'lifeline' }));
    root.append(svg('text', { x: px, y: 20, 'text-anchor': 'middle', class: 'participant' }, p));
  }
  d.steps.forEach((s, i) => {
    const y = TOP + i * ROW;
    if (s.kind === 'state') {
      const px = x.get(s.obj ?? '') ?? 0;
      root.append(svg('rect', { x: px - 4, y: y - 7, width: 8, height: 14, class: 'state-mark' }));
      root.append(svg('text', { x: px + 8, y: y + 4, class: 'state' }, `${s.from ? `${s.from} → ` : '→ '}${s.to}`));
      return;
    }
    const x1 = x.get(s.from ?? '') ?? 0;
    const x2 = x.get(s.to) ?? 0;
    const g = svg('g', { class: `msg ${s.kind}`, 'data-seq': s.seq });
    if (x1 === x2) {
      g.append(svg('path', { d: `M${x1},${y - 6} h24 v12 h-20`, 'marker-end': 'url(#arrow)', fill: 'none' }));
    } else {
      g.append(svg('line', { x1, y1: y, x2, y2: y, 'marker-end': 'url(#arrow)' }));
    }
    g.append(svg('text', { x: (x1 + x2) / 2, y: y - 3, 'text-anchor': 'middle' }, s.sig ?? ''));
    root.append(g);
  });
  if (d.truncated) root.append(svg('text', { x: 10, y: height - 5 }, '… truncated'));
  return root;
}
