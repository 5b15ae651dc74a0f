// Drawing a timeline on its canvas: the time axis, the rows, and per track its state
// intervals, its records as marks, or their counts per time slice.
import {
  AXIS,
  type Drawn,
  type DrawnLane,
  LABELS,
  LANE_HEAD,
  ROW,
  type Row,
  targetClock,
  targetLabel,
  type Viewport,
} from './model.js';

const PALETTE = [
  '#8ec5e8',
  '#a8d8a0',
  '#f5c28a',
  '#d6b4e8',
  '#f2a7a7',
  '#9fd9d0',
  '#e8d98e',
  '#c2c7ef',
  '#f0b7d4',
  '#b9d98e',
];

function colorOf(name: string): string {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return PALETTE[Math.abs(hash) % PALETTE.length];
}

/** A tick step of 1, 2 or 5 × 10^k ns giving about `count` ticks over `span`. */
function tickStep(span: number, count: number): number {
  const raw = span / count;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

/** Host time of day of `origin + offset` ns, to the precision `step` needs. */
function clockLabel(origin: bigint, offset: number, step: number): string {
  const ns = origin + BigInt(Math.round(offset));
  const ms = Number(ns / 1_000_000n);
  const sub = (ns % 1_000_000_000n).toString().padStart(9, '0');
  const digits = step >= 1e9 ? 0 : step >= 1e6 ? 3 : step >= 1e3 ? 6 : 9;
  const clock = new Date(ms).toISOString().slice(11, 19);
  return digits === 0 ? clock : `${clock}.${sub.slice(0, digits)}`;
}

/**
 * Draws the rows of `layout` over the window of `vp` with `data` (the window last fetched,
 * which may lag the view while a new one loads). The canvas's data attributes say what is
 * where, for tests and tools: `state` (ready once the data is the view's), the window in
 * absolute ns, each row's track and top.
 */
export function drawTimeline(
  canvas: HTMLCanvasElement,
  vp: Viewport,
  layout: { rows: Row[]; height: number },
  data: Drawn | undefined,
): void {
  const { rows, height } = layout;
  const { view } = vp;
  const dpr = window.devicePixelRatio || 1;
  const w = vp.width();
  if (canvas.width !== w * dpr || canvas.height !== height * dpr) {
    canvas.width = w * dpr;
    canvas.height = height * dpr;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${height}px`;
  }
  const g = canvas.getContext('2d')!;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, height);
  g.font = '11px ui-monospace, monospace';
  // Axis: host time of day on top, target time below it where records tell it.
  const span = view[1] - view[0];
  const step = tickStep(span, Math.max(2, Math.floor(vp.plotWidth() / 130)));
  g.fillStyle = '#f3f5f8';
  g.fillRect(0, 0, w, AXIS);
  g.fillStyle = '#456';
  const target = data?.target;
  g.fillText(target ? 'target time' : 'host time', 8, 16);
  g.fillText(target ? `segment ${target.segment}${target.tickRate === null ? ', ticks' : ''}` : 'target time', 8, 34);
  const targetAt = target ? () => null : targetClock(data);
  for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
    const x = vp.xOf(t);
    g.strokeStyle = '#e4e8ee';
    g.beginPath();
    g.moveTo(x, AXIS);
    g.lineTo(x, height);
    g.stroke();
    g.fillStyle = '#234';
    g.fillText(target ? targetLabel(Number(vp.origin) + t, step, target) : clockLabel(vp.origin, t, step), x + 3, 16);
    const interpolated = targetAt(t);
    if (interpolated !== null) {
      g.fillStyle = '#678';
      g.fillText(interpolated, x + 3, 34);
    }
  }
  // Rows.
  const lanes = new Map((data?.lanes ?? []).map((l) => [l.lane.session, l]));
  for (const row of rows) {
    if (row.head) {
      g.fillStyle = '#e8eef5';
      g.fillRect(0, row.y, w, LANE_HEAD);
      g.fillStyle = '#123';
      g.font = 'bold 12px system-ui, sans-serif';
      const l = lanes.get(row.session)?.lane;
      g.fillText(`${row.label}${l ? `  ${l.rig}/${l.link} (${l.protocol})` : ''}`, 8, row.y + 15);
      g.font = '11px ui-monospace, monospace';
      continue;
    }
    g.fillStyle = '#345';
    g.fillText(row.label.length > 27 ? `${row.label.slice(0, 26)}…` : row.label, 8, row.y + 16);
    g.strokeStyle = '#eef0f4';
    g.beginPath();
    g.moveTo(0, row.y + ROW);
    g.lineTo(w, row.y + ROW);
    g.stroke();
    const lane = lanes.get(row.session);
    if (!lane || !data) continue;
    g.save();
    g.beginPath();
    g.rect(LABELS, row.y, vp.plotWidth(), ROW);
    g.clip();
    drawStates(g, vp, lane, row.track, row.y);
    if (lane.lane.detail) drawItems(g, vp, lane, row.track, row.y);
    else drawBuckets(g, vp, data, lane, row.track, row.y);
    g.restore();
  }
  g.strokeStyle = '#ccd';
  g.beginPath();
  g.moveTo(LABELS - 0.5, 0);
  g.lineTo(LABELS - 0.5, height);
  g.stroke();
  const fresh = data && data.from === Math.round(view[0]) && data.to === Math.round(view[1]);
  if (fresh) canvas.dataset.state = 'ready';
  canvas.dataset.span = String(span);
  canvas.dataset.from = vp.at(view[0]).toString();
  canvas.dataset.to = vp.at(view[1]).toString();
  canvas.dataset.rows = JSON.stringify(rows.filter((r) => !r.head).map((r) => [r.session, r.track, r.y]));
}

/** An object's states as intervals, each from its change to the next (or the lane's end). */
function drawStates(g: CanvasRenderingContext2D, vp: Viewport, lane: DrawnLane, track: string | null, y: number) {
  if (track === null) return;
  const width = vp.width();
  const changes = lane.states.filter((s) => s.track === track);
  for (let i = 0; i < changes.length; i++) {
    const start = changes[i].at;
    const end = i + 1 < changes.length ? changes[i + 1].at : lane.end;
    const x0 = Math.max(LABELS, vp.xOf(start));
    const x1 = Math.min(width, vp.xOf(end));
    if (x1 < LABELS || x0 > width) continue;
    g.fillStyle = colorOf(changes[i].state);
    g.fillRect(x0, y + 3, Math.max(1, x1 - x0 - 1), ROW - 6);
    if (x1 - x0 > 40) {
      g.fillStyle = '#123';
      const label = changes[i].state;
      const fit = Math.floor((x1 - x0 - 8) / 6.6);
      g.fillText(label.length > fit ? `${label.slice(0, Math.max(1, fit - 1))}…` : label, x0 + 4, y + 16);
    }
  }
}

/** A track's records as marks (errors as red triangles), labelled with their signal where there is room. */
function drawItems(g: CanvasRenderingContext2D, vp: Viewport, lane: DrawnLane, track: string | null, y: number) {
  const width = vp.width();
  let lastLabelEnd = 0;
  for (const i of lane.items) {
    if (i.track !== track || i.state !== null) continue;
    const x = vp.xOf(i.at);
    if (x < LABELS - 5 || x > width + 5) continue;
    if (i.kind === 'error') {
      g.fillStyle = '#c0182a';
      g.beginPath();
      g.moveTo(x, y + 3);
      g.lineTo(x + 5, y + ROW - 4);
      g.lineTo(x - 5, y + ROW - 4);
      g.fill();
    } else {
      g.fillStyle = i.name === 'QS_QEP_DISPATCH' ? '#1d5fa0' : '#2c3e50';
      g.fillRect(x - 0.75, y + 4, 1.5, ROW - 8);
    }
    const label = i.sig ?? (i.name.startsWith('QS_') ? '' : i.name);
    if (label && x > lastLabelEnd + 4) {
      g.fillStyle = i.kind === 'error' ? '#c0182a' : '#234';
      g.fillText(label, x + 3, y + 10);
      lastLabelEnd = x + 3 + label.length * 6.6;
    }
  }
}

/** A track's records counted per time slice (log scale), a red bar over slices with errors. */
function drawBuckets(
  g: CanvasRenderingContext2D,
  vp: Viewport,
  data: Drawn,
  lane: DrawnLane,
  track: string | null,
  y: number,
) {
  const mine = lane.lane.buckets.filter((b) => b.track === track);
  const max = Math.max(1, ...mine.map((b) => b.records));
  for (const b of mine) {
    const t0 = data.from + b.bucket * data.bucketNs;
    const x0 = vp.xOf(t0);
    const x1 = vp.xOf(t0 + data.bucketNs);
    const level = Math.log1p(b.records) / Math.log1p(max);
    const hgt = Math.max(2, level * (ROW - 6));
    g.fillStyle = 'rgba(29, 95, 160, 0.75)';
    g.fillRect(x0, y + ROW - 3 - hgt, Math.max(1, x1 - x0), hgt);
    if (b.errors > 0) {
      g.fillStyle = '#c0182a';
      g.fillRect(x0, y + 1, Math.max(2, x1 - x0), 3);
    }
  }
}
