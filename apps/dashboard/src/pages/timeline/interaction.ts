// What the pointer does on a timeline: the wheel zooms about the pointer, a drag pans, a click
// picks the record (or the state) under it.
import { type Drawn, LABELS, MIN_SPAN, type PlacedItem, ROW, type Row, type Viewport } from './model.js';

export interface TimelineGestures {
  /** The view moved: draw it, and fetch its window. */
  changed(): void;
  /** A click that was not a drag, at (x, y) on the canvas. */
  clicked(x: number, y: number): void;
}

/** Zooms by `factor` about the time under `x`, no narrower than MIN_SPAN nor wider than 1.5 times the whole span. */
function zoomAt(vp: Viewport, x: number, factor: number): void {
  const t = vp.tOf(x);
  let span = (vp.view[1] - vp.view[0]) * factor;
  span = Math.max(MIN_SPAN, Math.min(span, (vp.extent[1] - vp.extent[0]) * 1.5));
  const ratio = (x - LABELS) / vp.plotWidth();
  vp.view = [t - ratio * span, t - ratio * span + span];
}

/** Moves `vp` as the wheel and drags on `canvas` ask, telling `gestures`. */
export function followGestures(canvas: HTMLCanvasElement, vp: Viewport, gestures: TimelineGestures): void {
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const rect = canvas.getBoundingClientRect();
      const x = Math.max(LABELS, e.clientX - rect.left);
      zoomAt(vp, x, Math.exp(e.deltaY * 0.002));
      gestures.changed();
    },
    { passive: false },
  );
  let drag: { x: number; view: [number, number]; moved: boolean } | undefined;
  canvas.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, view: [...vp.view], moved: false };
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    if (Math.abs(dx) > 2) drag.moved = true;
    if (!drag.moved) return;
    const dt = (dx / vp.plotWidth()) * (drag.view[1] - drag.view[0]);
    vp.view = [drag.view[0] - dt, drag.view[1] - dt];
    gestures.changed();
  });
  canvas.addEventListener('pointerup', (e) => {
    const wasDrag = drag?.moved;
    drag = undefined;
    if (wasDrag) return;
    const rect = canvas.getBoundingClientRect();
    gestures.clicked(e.clientX - rect.left, e.clientY - rect.top);
  });
}

/**
 * What is at (x, y): the record whose mark is nearest (within 6 px) on the row there, or else
 * the state its object was in; as the text shown under the timeline, and the record's seq.
 */
export function pickAt(
  rows: Row[],
  data: Drawn | undefined,
  vp: Viewport,
  x: number,
  y: number,
): { text: string; seq?: number } | undefined {
  const row = rows.find((r) => !r.head && y >= r.y && y < r.y + ROW);
  const lane = data?.lanes.find((l) => l.lane.session === row?.session);
  if (!row || !lane) return undefined;
  let best: PlacedItem | undefined;
  let bestDx = 6;
  for (const i of lane.items) {
    if (i.track !== row.track) continue;
    const dx = Math.abs(vp.xOf(i.at) - x);
    if (dx < bestDx) {
      bestDx = dx;
      best = i;
    }
  }
  if (best)
    return {
      text: `#${best.seq}  ${best.name}  ${best.kind}\nhost ${best.hostNs} ns  target ${best.targetTs ?? '—'}\n${best.text}`,
      seq: best.seq,
    };
  const state = [...lane.states].reverse().find((s) => s.track === row.track && s.at <= vp.tOf(x));
  if (!state) return undefined;
  return { text: `${row.track}: in state ${state.state} since record #${state.seq}` };
}
