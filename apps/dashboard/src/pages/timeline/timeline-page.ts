import type { Session, TargetTimelineReply, Timeline } from '@tracehub/api-contract';
import { getJson } from '../../api.js';
import { h } from '../../dom.js';
import { writeViewState } from '../../view-state.js';
import { drawTimeline } from './draw.js';
import { followGestures, pickAt } from './interaction.js';
import {
  axisSpanLabel,
  type Drawn,
  layoutRows,
  learnTracks,
  type TargetAxis,
  type Track,
  toDrawn,
  Viewport,
} from './model.js';

/**
 * A target-time timeline as the host-time drawing takes it: one lane, its times in ticks of
 * the segment where the host-time one has ns.
 */
function asTimeline(session: Session, r: TargetTimelineReply): Timeline {
  const from = r.fromTicks ?? '0';
  const to = r.toTicks ?? '1';
  return {
    fromNs: from,
    toNs: to,
    bucketNs: r.bucketTicks,
    lanes: [
      {
        session: session.id,
        rig: session.rig,
        link: session.link,
        protocol: session.protocol,
        fromNs: from,
        toNs: to,
        detail: r.items !== null,
        sampleEvery: 1,
        buckets: r.lanes.flatMap((l) => l.buckets.map((b) => ({ track: l.track, ...b }))),
        items: (r.items ?? []).map((i) => ({
          track: i.track,
          seq: i.seq,
          hostNs: i.targetTicks,
          targetTs: i.targetTicks,
          kind: i.kind,
          name: i.name,
          sig: i.sig,
          state: i.state,
          text: i.text,
        })),
        states: [],
      },
    ],
  };
}

/**
 * The timeline of one or more link sessions on one host-time axis: per session, a track per
 * active object (QS) or master/channel (STP) and one for the link, with state intervals,
 * records as marks (errors in red), and counts per time slice when the window holds more
 * records than can be shown one by one (the api aggregates; the browser never loads a whole
 * session). Wheel zooms about the pointer, dragging pans, a click on a mark shows its record.
 * Sessions and window are in the URL. With `axis=target` (one session) the axis is the
 * target's clock instead: one target segment (`segment`), in seconds by the link's tick rate
 * (else ticks), counted exactly per slice by the api from the blocks' target indexes.
 */
export function timelinePage(root: HTMLElement, params: URLSearchParams): () => void {
  const sessions = params
    .getAll('session')
    .flatMap((s) => s.split(','))
    .filter((s) => s !== '');
  const onTarget = params.get('axis') === 'target';
  const segment = Number(params.get('segment') ?? '0') || 0;
  let targetSession: Session | undefined;
  const canvas = h('canvas', { id: 'timeline', 'data-state': 'loading', 'data-axis': onTarget ? 'target' : 'host' });
  const status = h('span', { class: 'status', id: 'timeline-status' }, 'loading…');
  const detail = h('pre', { class: 'timeline-record', id: 'timeline-record', hidden: true });
  const error = h('p', { class: 'problem', hidden: true });
  const wrap = h('div', { class: 'timeline-wrap' }, canvas);
  const reset = h('button', { type: 'button', id: 'timeline-all' }, 'whole span');
  const axisLink = h(
    'a',
    {
      id: 'timeline-axis',
      href: `#/timeline?${new URLSearchParams([...sessions.map((x) => ['session', x]), ...(onTarget ? [] : [['axis', 'target']])])}`,
    },
    onTarget ? 'host time' : 'target time',
  );
  root.append(
    h('h2', {}, `Timeline · ${sessions.join(', ')}${onTarget ? ` · target time, segment ${segment}` : ''}`),
    h(
      'div',
      { class: 'bar' },
      reset,
      axisLink,
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
    if (onTarget) {
      p.set('axis', 'target');
      p.set('segment', String(segment));
    }
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
      let target: TargetAxis | undefined;
      let t: Timeline;
      if (onTarget) {
        q.delete('session');
        q.set('segment', String(segment));
        const id = encodeURIComponent(sessions[0]);
        const [about, r] = await Promise.all([
          targetSession ?? getJson<Session>(`/sessions/${id}`, mine.signal),
          getJson<TargetTimelineReply>(`/sessions/${id}/target-timeline?${q}`, mine.signal),
        ]);
        targetSession = about;
        target = { segment, tickRate: r.tickRate };
        t = asTimeline(about, r);
      } else {
        t = await getJson<Timeline>(`/timeline?${q}`, mine.signal);
      }
      if (mine.signal.aborted || disposed) return;
      if (from === undefined) {
        vp.origin = BigInt(t.fromNs);
        vp.extent = [0, Number(BigInt(t.toNs) - vp.origin)];
        vp.view = [...vp.extent];
      }
      learnTracks(tracks, t, sessions);
      data = { ...toDrawn(t, vp.origin), target };
      const shown = data.lanes.reduce((n, l) => n + l.items.length, 0);
      const counted = data.lanes.reduce((n, l) => n + l.lane.buckets.reduce((m, b) => m + b.records, 0), 0);
      status.textContent = `${axisSpanLabel(vp.view[1] - vp.view[0], target)} shown · ${
        data.lanes.every((l) => l.lane.detail)
          ? `${shown} records`
          : `${data.lanes.some((l) => l.lane.sampleEvery > 1) ? '≈' : ''}${counted.toLocaleString('en')} records, counted per ${axisSpanLabel(data.bucketNs, target)}`
      }`;
      canvas.dataset.records = String(data.lanes.every((l) => l.lane.detail) ? shown : counted);
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
