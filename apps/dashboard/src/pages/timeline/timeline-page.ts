import type { Timeline } from '@tracehub/api-contract';
import { getJson } from '../../api.js';
import { h } from '../../dom.js';
import { writeViewState } from '../../view-state.js';
import { drawTimeline } from './draw.js';
import { followGestures, pickAt } from './interaction.js';
import { type Drawn, layoutRows, learnTracks, spanLabel, type Track, toDrawn, Viewport } from './model.js';

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
  const vp = new Viewport(() => wrap.clientWidth || 1200);
  let data: Drawn | undefined;
  const tracks: Track[] = [];
  let abort: AbortController | undefined;
  let timer = 0;
  let frame = 0;
  let disposed = false;

  const draw = () => {
    frame = 0;
    drawTimeline(canvas, vp, layoutRows(tracks), data);
  };

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(draw);
  };

  const save = () => {
    const p = new URLSearchParams();
    for (const s of sessions) p.append('session', s);
    if (!vp.isWhole()) {
      p.set('from', vp.at(vp.view[0]).toString());
      p.set('to', vp.at(vp.view[1]).toString());
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
    q.set('buckets', String(Math.max(10, Math.min(4000, Math.round(vp.plotWidth())))));
    status.textContent = 'loading…';
    try {
      const t = await getJson<Timeline>(`/timeline?${q}`, mine.signal);
      if (mine.signal.aborted || disposed) return;
      if (from === undefined) {
        vp.origin = BigInt(t.fromNs);
        vp.extent = [0, Number(BigInt(t.toNs) - vp.origin)];
        vp.view = [...vp.extent];
      }
      learnTracks(tracks, t, sessions);
      data = toDrawn(t, vp.origin);
      const shown = data.lanes.reduce((n, l) => n + l.items.length, 0);
      const counted = data.lanes.reduce((n, l) => n + l.lane.buckets.reduce((m, b) => m + b.records, 0), 0);
      status.textContent = `${spanLabel(vp.view[1] - vp.view[0])} shown · ${
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

  /** The view moved: drawn at the next frame, its window fetched once the moving pauses. */
  const changed = () => {
    canvas.dataset.state = 'loading';
    save();
    schedule();
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      const from = vp.at(vp.view[0]);
      const to = vp.at(vp.view[1]);
      vp.view = [Math.round(vp.view[0]), Math.round(vp.view[1])];
      void fetchView(from, to);
    }, 60);
  };

  followGestures(canvas, vp, {
    changed,
    clicked: (x, y) => {
      const picked = pickAt(layoutRows(tracks).rows, data, vp, x, y);
      if (!picked) return;
      detail.textContent = picked.text;
      detail.hidden = false;
      detail.dataset.seq = String(picked.seq ?? '');
    },
  });
  reset.addEventListener('click', () => {
    vp.view = [...vp.extent];
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
      vp.view = [Number(BigInt(from) - vp.origin), Number(BigInt(to) - vp.origin)];
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
