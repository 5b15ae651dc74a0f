import type { Timeline, TimelineItem, TimelineLane } from '@tracehub/api-contract';
import { getJson } from '../api.js';
import { h } from '../dom.js';
import { writeViewState } from '../view-state.js';

type Item = TimelineItem;
type Lane = TimelineLane;

/** A lane's data in numbers relative to the view's origin (ns), ready to draw. */
interface Drawn {
  from: number;
  to: number;
  bucketNs: number;
  lanes: Array<{
    lane: Lane;
    end: number;
    items: Array<Item & { at: number }>;
    states: Array<{ track: string; at: number; state: string; seq: number }>;
  }>;
}

const LABELS = 210;
const AXIS = 46;
const ROW = 24;
const LANE_HEAD = 22;
/** The narrowest window a zoom goes to. */
const MIN_SPAN = 1_000;

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

/** A duration in the unit that reads best. */
export function spanLabel(ns: number): string {
  if (ns >= 60e9) return `${(ns / 60e9).toFixed(1)} min`;
  if (ns >= 1e9) return `${(ns / 1e9).toPrecision(3)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toPrecision(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toPrecision(3)} µs`;
  return `${Math.round(ns)} ns`;
}

/**
 * The timeline of one or more link sessions on one host-time axis: per session, a track per
 * active object (QS) or master/channel (STP) and one for the link, with state intervals,
 * records as marks (errors in red), and counts per time slice when the window holds more
 * records than can be shown one by one (the api aggregates; the browser never loads a whole
 * session). Wheel zooms about the pointer, dragging pans, a click on a mark shows its record.
 * Sessions and window are in the URL.
 */
export function timelinePage(root: HTMLElement, params: URLSearchParams): () => void {
  const sessions = params
    .getAll('session')
    .flatMap((s) => s.split(','))
    .filter((s) => s !== '');
  const canvas = h('canvas', { id: 'timeline', 'data-state': 'loading' });
  const status = h('span', { class: 'status', id: 'timeline-status' }, 'loading…');
  const detail = h('pre', { class: 'timeline-record', id: 'timeline-record', hidden: true });
  const error = h('p', { class: 'problem', hidden: true });
  const wrap = h('div', { class: 'timeline-wrap' }, canvas);
  const reset = h('button', { type: 'button', id: 'timeline-all' }, 'whole span');
  root.append(
    h('h2', {}, `Timeline · ${sessions.join(', ')}`),
    h(
      'div',
      { class: 'bar' },
      reset,
      status,
      h('span', { class: 'spacer' }),
      h('span', { class: 'status' }, 'wheel: zoom · drag: pan · click a mark: its record'),
    ),
    error,
    wrap,
    detail,
  );
  if (sessions.length === 0) {
    error.textContent = 'Open a timeline from a session (or give ?session=… in the URL, several to align them).';
    error.hidden = false;
    return () => {};
  }
  let origin = 0n;
  let extent: [number, number] = [0, 1];
  let view: [number, number] = [0, 1];
  let data: Drawn | undefined;
  const tracks: Array<{ session: string; track: string | null; label: string }> = [];
  let abort: AbortController | undefined;
  let timer = 0;
  let frame = 0;
  let disposed = false;

  const width = () => wrap.clientWidth || 1200;
  const plotWidth = () => width() - LABELS;
  const xOf = (t: number) => LABELS + ((t - view[0]) / (view[1] - view[0])) * plotWidth();
  const tOf = (x: number) => view[0] + ((x - LABELS) / plotWidth()) * (view[1] - view[0]);

  /** Tracks in a stable order: each session's link track, then its objects as they appear. */
  const learnTracks = (t: Timeline) => {
    for (const lane of t.lanes) {
      const names = new Set<string | null>([null]);
      for (const b of lane.buckets) names.add(b.track);
      for (const i of lane.items) names.add(i.track);
      for (const s of lane.states) names.add(s.track);
      for (const name of names)
        if (!tracks.some((k) => k.session === lane.session && k.track === name))
          tracks.push({ session: lane.session, track: name, label: name ?? `${lane.rig}/${lane.link}` });
    }
    tracks.sort((a, b) =>
      a.session !== b.session
        ? sessions.indexOf(a.session) - sessions.indexOf(b.session)
        : a.track === null
          ? -1
          : b.track === null
            ? 1
            : a.track.localeCompare(b.track),
    );
  };

  const toDrawn = (t: Timeline): Drawn => {
    const rel = (ns: string) => Number(BigInt(ns) - origin);
    return {
      from: rel(t.fromNs),
      to: rel(t.toNs),
      bucketNs: Number(t.bucketNs),
      lanes: t.lanes.map((lane) => ({
        lane,
        end: rel(lane.toNs),
        items: lane.items.map((i) => ({ ...i, at: rel(i.hostNs) })),
        states: lane.states.map((s) => ({ track: s.track, at: rel(s.hostNs), state: s.state, seq: s.seq })),
      })),
    };
  };

  const layout = () => {
    const rows: Array<{ y: number; session: string; track: string | null; label: string; head: boolean }> = [];
    let y = AXIS;
    let last = '';
    for (const t of tracks) {
      if (t.session !== last) {
        rows.push({ y, session: t.session, track: null, label: t.session, head: true });
        y += LANE_HEAD;
        last = t.session;
      }
      rows.push({ y, session: t.session, track: t.track, label: t.label, head: false });
      y += ROW;
    }
    return { rows, height: y + 8 };
  };

  const draw = () => {
    frame = 0;
    const { rows, height } = layout();
    const dpr = window.devicePixelRatio || 1;
    const w = width();
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
    const step = tickStep(span, Math.max(2, Math.floor(plotWidth() / 130)));
    g.fillStyle = '#f3f5f8';
    g.fillRect(0, 0, w, AXIS);
    g.fillStyle = '#456';
    g.fillText('host time', 8, 16);
    g.fillText('target time', 8, 34);
    const targetAt = targetClock();
    for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      const x = xOf(t);
      g.strokeStyle = '#e4e8ee';
      g.beginPath();
      g.moveTo(x, AXIS);
      g.lineTo(x, height);
      g.stroke();
      g.fillStyle = '#234';
      g.fillText(clockLabel(origin, t, step), x + 3, 16);
      const target = targetAt(t);
      if (target !== null) {
        g.fillStyle = '#678';
        g.fillText(target, x + 3, 34);
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
      g.rect(LABELS, row.y, plotWidth(), ROW);
      g.clip();
      drawStates(g, lane, row.track, row.y);
      if (lane.lane.detail) drawItems(g, lane, row.track, row.y);
      else drawBuckets(g, lane, row.track, row.y);
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
    // What is where, for tests and tools: the window in absolute ns and each row's track and top.
    canvas.dataset.from = (origin + BigInt(Math.round(view[0]))).toString();
    canvas.dataset.to = (origin + BigInt(Math.round(view[1]))).toString();
    canvas.dataset.rows = JSON.stringify(rows.filter((r) => !r.head).map((r) => [r.session, r.track, r.y]));
  };

  /** Target time at a host time, interpolated between the records around it (detail only). */
  const targetClock = () => {
    const known = (data?.lanes ?? [])
      .flatMap((l) => l.items)
      .filter((i) => i.targetTs !== null)
      .map((i) => [i.at, Number(i.targetTs)] as const);
    return (t: number): string | null => {
      if (known.length < 2) return null;
      let i = known.findIndex(([at]) => at >= t);
      if (i <= 0) i = i === 0 ? 1 : known.length - 1;
      const [a0, v0] = known[i - 1];
      const [a1, v1] = known[i];
      if (t < a0 - (a1 - a0) * 4 || a1 === a0) return t >= a0 && t <= a1 ? String(v0) : null;
      return String(Math.round(v0 + ((t - a0) / (a1 - a0)) * (v1 - v0)));
    };
  };

  const drawStates = (g: CanvasRenderingContext2D, lane: Drawn['lanes'][number], track: string | null, y: number) => {
    if (track === null) return;
    const changes = lane.states.filter((s) => s.track === track);
    for (let i = 0; i < changes.length; i++) {
      const start = changes[i].at;
      const end = i + 1 < changes.length ? changes[i + 1].at : lane.end;
      const x0 = Math.max(LABELS, xOf(start));
      const x1 = Math.min(width(), xOf(end));
      if (x1 < LABELS || x0 > width()) continue;
      g.fillStyle = colorOf(changes[i].state);
      g.fillRect(x0, y + 3, Math.max(1, x1 - x0 - 1), ROW - 6);
      if (x1 - x0 > 40) {
        g.fillStyle = '#123';
        const label = changes[i].state;
        const fit = Math.floor((x1 - x0 - 8) / 6.6);
        g.fillText(label.length > fit ? `${label.slice(0, Math.max(1, fit - 1))}…` : label, x0 + 4, y + 16);
      }
    }
  };

  const drawItems = (g: CanvasRenderingContext2D, lane: Drawn['lanes'][number], track: string | null, y: number) => {
    let lastLabelEnd = 0;
    for (const i of lane.items) {
      if (i.track !== track || i.state !== null) continue;
      const x = xOf(i.at);
      if (x < LABELS - 5 || x > width() + 5) continue;
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
  };

  const drawBuckets = (g: CanvasRenderingContext2D, lane: Drawn['lanes'][number], track: string | null, y: number) => {
    if (!data) return;
    const mine = lane.lane.buckets.filter((b) => b.track === track);
    const max = Math.max(1, ...mine.map((b) => b.records));
    for (const b of mine) {
      const t0 = data.from + b.bucket * data.bucketNs;
      const x0 = xOf(t0);
      const x1 = xOf(t0 + data.bucketNs);
      const level = Math.log1p(b.records) / Math.log1p(max);
      const hgt = Math.max(2, level * (ROW - 6));
      g.fillStyle = 'rgba(29, 95, 160, 0.75)';
      g.fillRect(x0, y + ROW - 3 - hgt, Math.max(1, x1 - x0), hgt);
      if (b.errors > 0) {
        g.fillStyle = '#c0182a';
        g.fillRect(x0, y + 1, Math.max(2, x1 - x0), 3);
      }
    }
  };

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(draw);
  };

  const save = () => {
    const p = new URLSearchParams();
    for (const s of sessions) p.append('session', s);
    if (view[0] !== extent[0] || view[1] !== extent[1]) {
      p.set('from', (origin + BigInt(Math.round(view[0]))).toString());
      p.set('to', (origin + BigInt(Math.round(view[1]))).toString());
    }
    writeViewState('timeline', p);
  };

  const fetchView = async (from?: bigint, to?: bigint) => {
    abort?.abort();
    const mine = new AbortController();
    abort = mine;
    const q = new URLSearchParams();
    for (const s of sessions) q.append('session', s);
    if (from !== undefined && to !== undefined) {
      q.set('from', from.toString());
      q.set('to', to.toString());
    }
    q.set('buckets', String(Math.max(10, Math.min(4000, Math.round(plotWidth())))));
    status.textContent = 'loading…';
    try {
      const t = await getJson<Timeline>(`/timeline?${q}`, mine.signal);
      if (mine.signal.aborted || disposed) return;
      if (from === undefined) {
        origin = BigInt(t.fromNs);
        extent = [0, Number(BigInt(t.toNs) - origin)];
        view = [...extent];
      }
      learnTracks(t);
      data = toDrawn(t);
      const shown = data.lanes.reduce((n, l) => n + l.items.length, 0);
      const counted = data.lanes.reduce((n, l) => n + l.lane.buckets.reduce((m, b) => m + b.records, 0), 0);
      status.textContent = `${spanLabel(view[1] - view[0])} shown · ${
        data.lanes.every((l) => l.lane.detail)
          ? `${shown} records`
          : `${data.lanes.some((l) => l.lane.sampleEvery > 1) ? '≈' : ''}${counted.toLocaleString('en')} records, counted per ${spanLabel(data.bucketNs)}`
      }`;
      canvas.dataset.mode = data.lanes.every((l) => l.lane.detail) ? 'detail' : 'buckets';
      error.hidden = true;
      draw();
    } catch (e) {
      if (mine.signal.aborted || disposed) return;
      error.textContent = (e as Error).message;
      error.hidden = false;
      status.textContent = '';
    }
  };

  const changed = () => {
    canvas.dataset.state = 'loading';
    save();
    schedule();
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      const from = origin + BigInt(Math.round(view[0]));
      const to = origin + BigInt(Math.round(view[1]));
      view = [Math.round(view[0]), Math.round(view[1])];
      void fetchView(from, to);
    }, 60);
  };

  const zoomAt = (x: number, factor: number) => {
    const t = tOf(x);
    let span = (view[1] - view[0]) * factor;
    span = Math.max(MIN_SPAN, Math.min(span, (extent[1] - extent[0]) * 1.5));
    const ratio = (x - LABELS) / plotWidth();
    view = [t - ratio * span, t - ratio * span + span];
    changed();
  };

  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const rect = canvas.getBoundingClientRect();
      const x = Math.max(LABELS, e.clientX - rect.left);
      zoomAt(x, Math.exp(e.deltaY * 0.002));
    },
    { passive: false },
  );
  let drag: { x: number; view: [number, number]; moved: boolean } | undefined;
  canvas.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, view: [...view], moved: false };
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    if (Math.abs(dx) > 2) drag.moved = true;
    if (!drag.moved) return;
    const dt = (dx / plotWidth()) * (drag.view[1] - drag.view[0]);
    view = [drag.view[0] - dt, drag.view[1] - dt];
    changed();
  });
  canvas.addEventListener('pointerup', (e) => {
    const wasDrag = drag?.moved;
    drag = undefined;
    if (!wasDrag) pick(e);
  });
  const pick = (e: PointerEvent) => {
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const row = layout().rows.find((r) => !r.head && y >= r.y && y < r.y + ROW);
    const lane = data?.lanes.find((l) => l.lane.session === row?.session);
    if (!row || !lane) return;
    let best: (Item & { at: number }) | undefined;
    let bestDx = 6;
    for (const i of lane.items) {
      if (i.track !== row.track) continue;
      const dx = Math.abs(xOf(i.at) - x);
      if (dx < bestDx) {
        bestDx = dx;
        best = i;
      }
    }
    if (!best) {
      const state = [...lane.states].reverse().find((s) => s.track === row.track && s.at <= tOf(x));
      if (!state) return;
      detail.textContent = `${row.track}: in state ${state.state} since record #${state.seq}`;
    } else {
      detail.textContent = `#${best.seq}  ${best.name}  ${best.kind}\nhost ${best.hostNs} ns  target ${best.targetTs ?? '—'}\n${best.text}`;
    }
    detail.hidden = false;
    detail.dataset.seq = String(best?.seq ?? '');
  };
  reset.addEventListener('click', () => {
    view = [...extent];
    changed();
  });
  const onResize = () => schedule();
  window.addEventListener('resize', onResize);

  const from = params.get('from');
  const to = params.get('to');
  void (async () => {
    // The whole span first (it sets the origin and the tracks), then the window of the URL.
    await fetchView();
    if (from && to && /^\d+$/.test(from) && /^\d+$/.test(to)) {
      view = [Number(BigInt(from) - origin), Number(BigInt(to) - origin)];
      changed();
    }
  })();
  return () => {
    disposed = true;
    abort?.abort();
    clearTimeout(timer);
    window.removeEventListener('resize', onResize);
  };
}
