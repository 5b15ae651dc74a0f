import type { TraceRecord } from '@tracehub/contracts';
import { streamUrl } from '../api.js';
import { h } from '../dom.js';
import { filterForm } from '../filters.js';
import { ROW_HEIGHT, renderRecordRow } from '../record-row.js';
import { writeViewState } from '../view-state.js';
import { VirtualList } from '../virtual-list.js';

/** Rows kept in the browser; older ones are dropped (the search page has all of history). */
const RETAINED = 50_000;

/**
 * Live tail over SSE with filters and pause. Incoming records are buffered and handed to the
 * list once per animation frame, so 5 000 records/s cost one render per frame.
 */
export function livePage(root: HTMLElement, params: URLSearchParams): () => void {
  const list = new VirtualList<TraceRecord>(ROW_HEIGHT, renderRecordRow);
  list.follow = true;
  const status = h('span', { class: 'status', id: 'live-status' }, 'connecting…');
  const counter = h('span', { class: 'status', id: 'live-count' }, '0 records');
  let paused = false;
  let pending: TraceRecord[] = [];
  let received = 0;
  let missed = 0;
  let source: EventSource | undefined;
  let frame = 0;
  const pauseButton = h('button', { type: 'button', id: 'pause' }, 'Pause');
  pauseButton.addEventListener('click', () => {
    paused = !paused;
    pauseButton.textContent = paused ? 'Resume' : 'Pause';
    list.follow = !paused;
  });

  const flush = () => {
    frame = 0;
    if (paused) return;
    list.append(pending, RETAINED);
    pending = [];
    counter.textContent = `${received} records${missed ? `, ${missed} missed (too slow)` : ''}`;
  };
  const connect = (query: URLSearchParams) => {
    source?.close();
    list.setItems([]);
    received = 0;
    missed = 0;
    source = new EventSource(streamUrl('/live/sse', query));
    source.onopen = () => (status.textContent = 'live');
    source.onerror = () => (status.textContent = 'reconnecting…');
    source.addEventListener('records', (e) => {
      const records = JSON.parse((e as MessageEvent<string>).data) as TraceRecord[];
      received += records.length;
      // While paused, only the newest rows wait; the rest is counted.
      for (const r of records) pending.push(r);
      if (pending.length > RETAINED) pending.splice(0, pending.length - RETAINED);
      if (!frame) frame = requestAnimationFrame(flush);
    });
    source.addEventListener('missed', (e) => {
      missed += JSON.parse((e as MessageEvent<string>).data).missed;
    });
  };
  const form = filterForm(
    ['rig', 'link', 'name', 'kind', 'obj', 'sig', 'master', 'channel', 'text'],
    (query) => {
      writeViewState('live', query);
      connect(query);
    },
    params,
  );
  root.append(h('h2', {}, 'Live tail'), form, h('div', { class: 'bar' }, pauseButton, status, counter), list.element);
  connect(params);
  return () => {
    source?.close();
    if (frame) cancelAnimationFrame(frame);
  };
}
