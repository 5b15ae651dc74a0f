import type { StateCounts, StateMachine, TransitionCount } from '@tracehub/api-contract';
import { SVG_NS, svg } from './svg.js';

/** Internal transitions listed inside a state's box; more are summed up in one line. */
const INTERNAL_LINES = 4;
const CHAR = 6.8;
const LINE = 15;

/** Styles inside the SVG, so a downloaded file looks as it does on the page. */
const STYLE = `
text { font: 12px ui-monospace, monospace; fill: #123; }
.state rect { fill: #eef5e8; stroke: #6a9a4e; stroke-width: 1.4; }
.state .name { font-weight: 700; font-size: 13px; }
.state .entered { fill: #567; font-size: 11px; }
.state .internal { fill: #354; font-size: 11px; }
.state line { stroke: #6a9a4e; }
.transition path { fill: none; stroke: #345; }
.transition text { fill: #123; }
.transition rect.label-bg { fill: #fff; fill-opacity: 0.92; stroke: #dde; rx: 3; }
.transition.initial path, .transition.state-initial path { stroke: #2a62a8; }
.transition.initial text, .transition.state-initial text { fill: #1d4f8c; }
.transition.state-initial path, .transition.history path, .transition.entry-point path, .transition.exit-point path { stroke-dasharray: 5 3; }
.transition.history path, .transition.entry-point path, .transition.exit-point path { stroke: #8a5a12; }
.initial-dot { fill: #123; }
.arrow { fill: #345; }
.arrow-init { fill: #2a62a8; }
.arrow-other { fill: #8a5a12; }
`;

interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const overlaps = (a: Rect, b: Rect) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

interface Box {
  state: StateCounts;
  x: number;
  y: number;
  w: number;
  h: number;
  lines: string[];
}

/** What a transition's label says of one counted transition. */
function labelOf(t: TransitionCount): string {
  const what =
    t.kind === 'transition' ? (t.sig ?? '?') : t.kind === 'state-initial' ? 'initial' : t.kind.replace('-', ' ');
  return `${what} ×${t.count}`;
}

/** Where the line from a box's centre towards (tx, ty) leaves the box. */
function edgeOf(b: Box, tx: number, ty: number): [number, number] {
  const dx = tx - b.x;
  const dy = ty - b.y;
  if (dx === 0 && dy === 0) return [b.x, b.y];
  const t = Math.min(dx === 0 ? Infinity : b.w / 2 / Math.abs(dx), dy === 0 ? Infinity : b.h / 2 / Math.abs(dy));
  return [b.x + dx * t, b.y + dy * t];
}

/**
 * States in the order the machine reaches them: from its initial state along its most
 * frequent transitions, depth first (a cycle goes round the ellipse); states never reached
 * that way follow by name.
 */
function reachOrder(m: StateMachine): StateCounts[] {
  const byName = new Map(m.states.map((s) => [s.name, s]));
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = m.transitions.filter((t) => t.from === null).map((t) => t.to);
  for (const s of m.states) queue.push(s.name);
  while (queue.length > 0) {
    const s = queue.shift()!;
    if (seen.has(s) || !byName.has(s)) continue;
    seen.add(s);
    out.push(s);
    const next = m.transitions.filter((t) => t.from === s && !seen.has(t.to)).map((t) => t.to);
    queue.unshift(...next);
  }
  return out.map((n) => byName.get(n)!);
}

/**
 * Draws a state machine as one SVG: a box per state (its name, how often it was entered, its
 * internal transitions), the states on an ellipse in the order the machine reaches them, one
 * arrow per pair of states labelled with each signal that took it and how often (thicker for
 * more), the initial transition from a dot, a state's own transitions as loops above it.
 */
export function drawStateMachine(m: StateMachine): SVGSVGElement {
  const states = reachOrder(m);
  const boxes = new Map<string, Box>();
  for (const s of states) {
    const lines = s.internal.slice(0, INTERNAL_LINES).map((i) => `${i.sig} / ×${i.count}`);
    if (s.internal.length > INTERNAL_LINES)
      lines.push(
        `+${s.internal.length - INTERNAL_LINES} more, ×${s.internal.slice(INTERNAL_LINES).reduce((n, i) => n + i.count, 0)}`,
      );
    const entered = `entered ×${s.entries}`;
    const w = Math.max(130, 24 + CHAR * Math.max(s.name.length * 1.1, entered.length, ...lines.map((l) => l.length)));
    const h = 44 + (lines.length > 0 ? 8 + lines.length * LINE : 0);
    boxes.set(s.name, { state: s, x: 0, y: 0, w, h, lines });
  }
  // Places the states on an ellipse, clockwise from the left; wide enough that neighbours do not touch.
  const list = [...boxes.values()];
  const widest = Math.max(0, ...list.map((b) => b.w));
  const tallest = Math.max(0, ...list.map((b) => b.h));
  const n = list.length;
  const rx = n <= 1 ? 0 : n === 2 ? widest + 120 : Math.max(widest + 110, (n * (widest + 70)) / (2 * Math.PI) + 60);
  const ry = n <= 2 ? 0 : Math.max(tallest + 70, (n * (tallest + 90)) / (2 * Math.PI) + 40);
  list.forEach((b, i) => {
    const a = Math.PI + (2 * Math.PI * i) / Math.max(n, 1);
    b.x = Math.round(rx * Math.cos(a));
    b.y = Math.round(ry * Math.sin(a));
  });

  const root = svg('svg', { class: 'state-machine', xmlns: SVG_NS, 'data-obj': m.obj });
  const defs = svg('defs', {});
  for (const [id, cls] of [
    ['sm-arrow', 'arrow'],
    ['sm-arrow-init', 'arrow-init'],
    ['sm-arrow-other', 'arrow-other'],
  ]) {
    const marker = svg('marker', {
      id,
      viewBox: '0 0 10 10',
      refX: 9,
      refY: 5,
      markerWidth: 11,
      markerHeight: 11,
      orient: 'auto-start-reverse',
      markerUnits: 'userSpaceOnUse',
    });
    marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: cls }));
    defs.append(marker);
  }
  root.append(svg('style', {}, STYLE), defs);
  const edges = svg('g', { class: 'transitions' });
  const labels = svg('g', { class: 'labels' });
  const extent = { x0: 0, y0: 0, x1: 0, y1: 0 };
  const grow = (x: number, y: number, pad = 0) => {
    extent.x0 = Math.min(extent.x0, x - pad);
    extent.x1 = Math.max(extent.x1, x + pad);
    extent.y0 = Math.min(extent.y0, y - pad);
    extent.y1 = Math.max(extent.y1, y + pad);
  };
  const max = Math.max(1, ...m.transitions.map((t) => t.count));
  const widthOf = (count: number) => (1.2 + (2.8 * Math.log1p(count)) / Math.log1p(max)).toFixed(2);
  const markerOf = (kind: TransitionCount['kind']) =>
    kind === 'initial' || kind === 'state-initial'
      ? 'sm-arrow-init'
      : kind === 'transition'
        ? 'sm-arrow'
        : 'sm-arrow-other';
  // Transitions between the same two states (and of one kind's look) share one arrow and one label.
  const groups = new Map<string, TransitionCount[]>();
  for (const t of m.transitions) {
    const look = t.kind === 'transition' ? 'transition' : t.kind;
    const key = `${look}\u0000${t.from ?? ''}\u0000${t.to}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  // What is drawn where a label must not go: the state boxes, then each label placed.
  const taken: Rect[] = list.map((b) => ({
    x0: b.x - b.w / 2,
    y0: b.y - b.h / 2,
    x1: b.x + b.w / 2,
    y1: b.y + b.h / 2,
  }));
  /** Puts a label at the first of `spots` where it covers no state and no other label (else at the first). */
  const label = (g: SVGGElement, ts: TransitionCount[], spots: Array<[number, number]>) => {
    const lines = ts.map(labelOf);
    const w = Math.max(...lines.map((l) => l.length)) * CHAR + 10;
    const h = lines.length * LINE + 4;
    const rectAt = ([x, y]: [number, number]): Rect => ({ x0: x - w / 2, y0: y - h / 2, x1: x + w / 2, y1: y + h / 2 });
    const [x, y] = spots.find((spot) => !taken.some((r) => overlaps(r, rectAt(spot)))) ?? spots[0];
    const r = rectAt([x, y]);
    taken.push(r);
    grow(r.x0, r.y0);
    grow(r.x1, r.y1);
    // A white card under the text: the arrow it sits on does not run through the words.
    g.append(svg('rect', { x: r.x0, y: r.y0, width: w, height: h, class: 'label-bg' }));
    lines.forEach((line, i) => {
      const t = svg(
        'text',
        { x, y: r.y0 + 2 + LINE / 2 + i * LINE + 4, 'text-anchor': 'middle', class: 'label' },
        line,
      );
      if (ts[i].sig !== null) t.setAttribute('data-sig', ts[i].sig!);
      t.setAttribute('data-count', String(ts[i].count));
      g.append(t);
    });
  };
  const centre = { x: 0, y: 0 };
  /** Arrows drawn so far between two states, by `from to`. */
  const drawn = new Map<string, number>();
  for (const ts of groups.values()) {
    const { from, to, kind } = ts[0];
    const total = ts.reduce((s, t) => s + t.count, 0);
    const g = svg('g', { class: `transition ${kind}`, 'data-from': from ?? '', 'data-to': to, 'data-count': total });
    const lg = svg('g', { class: `transition ${kind}`, 'data-from': from ?? '', 'data-to': to });
    const b = boxes.get(to)!;
    const attrs = { 'stroke-width': widthOf(total), 'marker-end': `url(#${markerOf(kind)})` };
    if (from === null) {
      // The initial transition: from a dot outside the ellipse, towards the state.
      let dx = b.x - centre.x;
      let dy = b.y - centre.y;
      if (dx === 0 && dy === 0) dx = -1;
      const len = Math.hypot(dx, dy);
      dx /= len;
      dy /= len;
      const [ex, ey] = edgeOf(b, b.x + dx * 1000, b.y + dy * 1000);
      const dot = { x: ex + dx * 100, y: ey + dy * 100 };
      g.append(
        svg('circle', { cx: dot.x, cy: dot.y, r: 7, class: 'initial-dot' }),
        svg('path', { d: `M${dot.x},${dot.y} L${ex},${ey}`, ...attrs }),
      );
      grow(dot.x, dot.y, 12);
      const mx = (dot.x + ex) / 2;
      const my = (dot.y + ey) / 2;
      label(lg, ts, [
        [mx, my - 16],
        [mx, my + 16],
        [dot.x - dx * 40, dot.y - dy * 40],
      ]);
    } else if (from === to) {
      // A transition that leaves and enters the same state: a loop over its box.
      const x0 = b.x - 22;
      const x1 = b.x + 22;
      const y = b.y - b.h / 2;
      g.append(svg('path', { d: `M${x0},${y} C${x0 - 30},${y - 60} ${x1 + 30},${y - 60} ${x1},${y}`, ...attrs }));
      label(lg, ts, [
        [b.x, y - 52 - ((ts.length - 1) * LINE) / 2],
        [b.x, y - 80 - ((ts.length - 1) * LINE) / 2],
      ]);
      grow(b.x, y - 70);
    } else {
      const a = boxes.get(from)!;
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const len = Math.hypot(dx, dy) || 1;
      // Bent to the left of its direction: the two directions between a pair never overlap,
      // and a second arrow of the same direction (a history transition beside a plain one) bends further.
      const pair = `${from}\u0000${to}`;
      const before = drawn.get(pair) ?? 0;
      drawn.set(pair, before + 1);
      const bend = Math.min(70, 0.2 * len) + 34 * before;
      const cx = (a.x + b.x) / 2 + (dy / len) * bend;
      const cy = (a.y + b.y) / 2 - (dx / len) * bend;
      const [sx, sy] = edgeOf(a, cx, cy);
      const [ex, ey] = edgeOf(b, cx, cy);
      g.append(svg('path', { d: `M${sx},${sy} Q${cx},${cy} ${ex},${ey}`, ...attrs }));
      // Along the arrow from its middle outwards.
      const at = (t: number): [number, number] => [
        (1 - t) ** 2 * sx + 2 * (1 - t) * t * cx + t ** 2 * ex,
        (1 - t) ** 2 * sy + 2 * (1 - t) * t * cy + t ** 2 * ey,
      ];
      label(lg, ts, [0.5, 0.4, 0.6, 0.32, 0.68, 0.25, 0.75, 0.18, 0.82].map(at));
    }
    edges.append(g);
    labels.append(lg);
  }
  const stateLayer = svg('g', { class: 'states' });
  for (const b of list) {
    const g = svg('g', { class: 'state', 'data-state': b.state.name });
    const left = b.x - b.w / 2;
    const top = b.y - b.h / 2;
    g.append(
      svg(
        'title',
        {},
        `${b.state.name}: entered ${b.state.entries}×, exited ${b.state.exits}×, ${b.state.dispatched.reduce((n, d) => n + d.count, 0)} events dispatched in it`,
      ),
      svg('rect', { x: left, y: top, width: b.w, height: b.h, rx: 10 }),
      svg('text', { x: b.x, y: top + 19, 'text-anchor': 'middle', class: 'name' }, b.state.name),
      svg('text', { x: b.x, y: top + 35, 'text-anchor': 'middle', class: 'entered' }, `entered ×${b.state.entries}`),
    );
    if (b.lines.length > 0) {
      g.append(svg('line', { x1: left, x2: left + b.w, y1: top + 44, y2: top + 44 }));
      b.lines.forEach((line, i) => {
        g.append(svg('text', { x: left + 10, y: top + 60 + i * LINE, class: 'internal' }, line));
      });
    }
    stateLayer.append(g);
    grow(left, top);
    grow(left + b.w, top + b.h);
  }
  root.append(edges, stateLayer, labels);
  const pad = 24;
  const width = Math.ceil(extent.x1 - extent.x0 + 2 * pad);
  const height = Math.ceil(extent.y1 - extent.y0 + 2 * pad);
  root.setAttribute('width', String(width));
  root.setAttribute('height', String(height));
  root.setAttribute('viewBox', `${Math.floor(extent.x0 - pad)} ${Math.floor(extent.y0 - pad)} ${width} ${height}`);
  return root;
}
