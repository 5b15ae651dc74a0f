import type { SequenceReply, SequenceStep } from '@tracehub/api-contract';
import { hostTime } from './dom.js';
import { SVG_NS, svg } from './svg.js';

/** A step of the api's sequence diagram (`GET /sessions/{id}/sequence`). */
export type Step = SequenceStep;

export type Diagram = SequenceReply;

/** Width of the time axis on the left. */
const AXIS = 190;
const HEAD = 34;
/**
 * How far above its arrow a label's baseline sits: clear of the line by more than a descender,
 * so the underscores of signal names (`PING_SIG`) are not drawn over by it.
 */
const LABEL_LIFT = 6;

/** Styles inside the SVG, so an exported file looks as it does on the page. */
const STYLE = `
text { font: 11px ui-monospace, monospace; fill: #123; }
.participant, .axis-title { font-weight: 700; font-size: 12px; }
.head rect { fill: #e8eef5; stroke: #9ab; }
.lifeline { stroke: #99a; stroke-dasharray: 4 3; }
.axis text { fill: #567; }
.axis .delta { fill: #98a; }
.grid { stroke: #eef0f4; }
.msg line, .msg path { stroke: #345; stroke-width: 1.3; fill: none; }
.msg text { paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
.msg.publish line { stroke: #27a; }
.msg.publish circle { fill: #27a; }
.msg.publish text { fill: #146; }
.msg.timeout line, .msg.timeout path { stroke: #b72; stroke-dasharray: 4 2; }
.msg.timeout text { fill: #842; }
.state-change rect { fill: #e3f3da; stroke: #7b5; }
.state-change.init rect { fill: #dde9f7; stroke: #58c; }
.state-change text { fill: #252; }
.state-change.init text { fill: #246; }
`;

/** Target time as the diagram's axis shows it, with the step to the previous row. */
function axisLabels(step: Step, previous: Step | undefined): [string, string] {
  const ts = step.targetTs ?? '';
  let delta = '';
  if (previous?.targetTs && step.targetTs) {
    const d = BigInt(step.targetTs) - BigInt(previous.targetTs);
    delta = `+${d}`;
  }
  return [ts, delta];
}

/**
 * Draws a sequence diagram as one SVG: participants across the top (each `lane` px apart),
 * one row per step (`row` px), target time down the left with the step from the previous row,
 * host time in each row's tooltip. Each event is one shape: a post one arrow, a publish one
 * fan-out from its sender to every subscriber it reached, a time event one dashed arrow from
 * its ticker, a state change one box on the object's lifeline.
 */
export function drawSequence(d: Diagram, zoom: number): SVGSVGElement {
  const lane = Math.round(160 * zoom);
  const row = Math.max(8, Math.round(22 * zoom));
  const x = new Map(d.participants.map((p, i) => [p, AXIS + lane / 2 + i * lane]));
  const width = AXIS + d.participants.length * lane + 20;
  const height = HEAD + 16 + d.steps.length * row + 20;
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'sequence', xmlns: SVG_NS });
  const defs = svg('defs', {});
  defs.append(svg('style', {}, STYLE));
  for (const [id, color] of [
    ['arrow', '#345'],
    ['arrow-publish', '#27a'],
    ['arrow-timeout', '#b72'],
  ]) {
    const marker = svg('marker', { id, markerWidth: 8, markerHeight: 8, refX: 7, refY: 4, orient: 'auto' });
    marker.append(svg('path', { d: 'M0,0 L8,4 L0,8 z', fill: color }));
    defs.append(marker);
  }
  root.append(defs);
  const top = HEAD + 16;
  // Time axis and row grid.
  const axis = svg('g', { class: 'axis' });
  axis.append(svg('text', { x: 8, y: HEAD - 12, class: 'axis-title' }, 'target time'));
  d.steps.forEach((s, i) => {
    const y = top + i * row + row / 2;
    if (i % 2 === 0) root.append(svg('rect', { x: 0, y: y - row / 2, width, height: row, fill: '#fafbfd' }));
    if (row >= 12 || i % Math.ceil(12 / row) === 0) {
      const [ts, delta] = axisLabels(s, d.steps[i - 1]);
      axis.append(svg('text', { x: 8, y: y + 4 }, ts));
      if (delta) axis.append(svg('text', { x: AXIS - 10, y: y + 4, 'text-anchor': 'end', class: 'delta' }, delta));
    }
  });
  root.append(axis);
  // Lifelines and the participants' heads.
  const head = svg('g', { class: 'head' });
  for (const p of d.participants) {
    const px = x.get(p)!;
    root.append(svg('line', { x1: px, y1: HEAD, x2: px, y2: height - 10, class: 'lifeline' }));
    const g = svg('g', {});
    g.append(svg('rect', { x: px - lane / 2 + 6, y: 6, width: lane - 12, height: HEAD - 10, rx: 4 }));
    g.append(svg('text', { x: px, y: HEAD - 12, 'text-anchor': 'middle', class: 'participant' }, p));
    g.append(svg('title', {}, p));
    head.append(g);
  }
  root.append(head);
  d.steps.forEach((s, i) => {
    const y = top + i * row + row / 2;
    const title = svg('title', {}, `#${s.seq}  target ${s.targetTs ?? '—'}  host ${hostTime(s.hostNs)}`);
    if (s.kind === 'state') {
      const px = x.get(s.obj) ?? 0;
      const g = svg('g', { class: `state-change${s.from === null ? ' init' : ''}`, 'data-seq': s.seq });
      const text = s.from === null ? `⇒ ${s.to}` : `${s.from} → ${s.to}`;
      const w = Math.min(lane * 1.6, text.length * 6.6 + 10);
      g.append(svg('rect', { x: px - 5, y: y - row / 2 + 2, width: w, height: row - 4, rx: 3 }));
      if (row >= 14) g.append(svg('text', { x: px + 1, y: y + 4 }, text));
      g.append(title);
      root.append(g);
      return;
    }
    const g = svg('g', { class: `msg ${s.kind}`, 'data-seq': s.seq });
    const x1 = x.get(s.from) ?? 0;
    if (s.kind === 'publish') {
      const targets = s.deliveries.map((t) => x.get(t.to) ?? 0);
      const left = Math.min(x1, ...targets);
      const right = Math.max(x1, ...targets);
      g.append(svg('circle', { cx: x1, cy: y, r: 3.5 }));
      // One line from the sender across to the farthest subscriber on each side, a head at each.
      if (left < x1) g.append(svg('line', { x1, y1: y, x2: left, y2: y }));
      if (right > x1) g.append(svg('line', { x1, y1: y, x2: right, y2: y }));
      for (const tx of targets) {
        if (tx === x1) continue;
        const dir = tx > x1 ? -1 : 1;
        g.append(
          svg('path', {
            d: `M${tx + dir * 7},${y - 4} L${tx},${y} L${tx + dir * 7},${y + 4}`,
            class: 'head',
            style: 'stroke:#27a',
          }),
        );
      }
      if (row >= 12)
        g.append(
          svg(
            'text',
            { x: x1 + (right > x1 ? 8 : -8), y: y - LABEL_LIFT, 'text-anchor': right > x1 ? 'start' : 'end' },
            `${s.sig} ×${s.deliveries.length}`,
          ),
        );
    } else {
      const x2 = x.get(s.to) ?? 0;
      const marker = s.kind === 'timeout' ? 'url(#arrow-timeout)' : 'url(#arrow)';
      if (x1 === x2) g.append(svg('path', { d: `M${x1},${y - 6} h24 v12 h-20`, 'marker-end': marker }));
      else g.append(svg('line', { x1, y1: y, x2: x2 + (x2 > x1 ? -2 : 2), y2: y, 'marker-end': marker }));
      if (row >= 12)
        g.append(
          svg(
            'text',
            { x: (x1 + x2) / 2, y: y - LABEL_LIFT, 'text-anchor': 'middle' },
            s.kind === 'timeout' ? `${s.sig} (time event)` : s.sig,
          ),
        );
    }
    g.append(title);
    root.append(g);
  });
  return root;
}
