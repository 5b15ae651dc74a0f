import type { RecordsPage } from '@tracehub/api-contract';
import type { TraceRecord } from '@tracehub/contracts';
import { EXPORT_FORMATS, exportFormatLabel, isExportAllowed } from '@tracehub/contracts/export-formats';
import { getJson, streamUrl } from '../api.js';
import { h } from '../dom.js';
import { filterForm } from '../filters.js';
import { ROW_HEIGHT, renderRecordRow } from '../record-row.js';
import { pageQuery } from '../time-range.js';
import { writeViewState } from '../view-state.js';
import { VirtualList } from '../virtual-list.js';

/**
 * Search over history with the api's filters and a time range; shows the newest records at
 * once and follows every change of the form, page after page into a virtual list. The form's
 * state is the page's URL.
 */
export function searchPage(
  root: HTMLElement,
  params: URLSearchParams,
  options: { fields?: string[]; title?: string; path?: string; fixed?: Record<string, string> } = {},
): () => void {
  const path = options.path ?? 'search';
  const list = new VirtualList<TraceRecord>(ROW_HEIGHT, renderRecordRow);
  const status = h('span', { class: 'status', id: 'search-status' }, '');
  const error = h('p', { class: 'problem', id: 'search-error', hidden: true });
  const more = h('button', { type: 'button', id: 'more' }, 'Load more');
  const exportLinks = h('span', { id: 'exports', hidden: true });
  let query = new URLSearchParams();
  let next: string | null = null;
  let items: TraceRecord[] = [];
  let generation = 0;

  const load = async () => {
    const mine = generation;
    const q = pageQuery(new URLSearchParams(query), query, 500, next);
    for (const [k, v] of Object.entries(options.fixed ?? {})) q.set(k, v);
    if (!q.has('order')) q.set('order', 'desc');
    status.textContent = 'loading…';
    try {
      const page = await getJson<RecordsPage>(`/records?${q}`);
      if (mine !== generation) return;
      items = items.concat(page.records);
      list.setItems(items);
      next = page.next;
      more.toggleAttribute('disabled', next === null);
      status.textContent = `${items.length} records${next ? ' (more available)' : ''}`;
      error.hidden = true;
      showExports(q);
    } catch (e) {
      if (mine !== generation) return;
      list.setItems([]);
      status.textContent = '';
      error.textContent = (e as Error).message;
      error.hidden = false;
      exportLinks.hidden = true;
      more.toggleAttribute('disabled', true);
    }
  };
  // Exports of what is shown, offered only once the api accepted the filters.
  const showExports = (q: URLSearchParams) => {
    exportLinks.hidden = !isExportAllowed(Object.fromEntries(q));
    exportLinks.replaceChildren(
      'export:',
      ...EXPORT_FORMATS.map((f) => {
        const eq = new URLSearchParams(q);
        for (const k of ['order', 'limit', 'cursor']) eq.delete(k);
        eq.set('format', f);
        return h(
          'a',
          { href: streamUrl('/records/export', eq), class: 'export' },
          ` ${exportFormatLabel(f, q.get('protocol') ?? undefined)}`,
        );
      }),
    );
  };
  const run = (q: URLSearchParams) => {
    generation++;
    query = q;
    writeViewState(path, q);
    next = null;
    items = [];
    void load();
  };
  more.addEventListener('click', () => void load());
  const form = filterForm(
    options.fields ?? ['rig', 'link', 'session', 'name', 'kind', 'obj', 'sig', 'master', 'channel', 'text'],
    run,
    params,
    { timeRange: true },
  );
  root.append(
    h('h2', {}, options.title ?? 'Search'),
    form,
    error,
    h('div', { class: 'bar' }, more, status, exportLinks),
    list.element,
  );
  run(params);
  return () => {
    generation++;
  };
}
