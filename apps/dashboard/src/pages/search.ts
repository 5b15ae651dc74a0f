import { getJson, streamUrl, type TraceRecord } from '../api.js';
import { h } from '../dom.js';
import { filterForm } from '../filters.js';
import { ROW_HEIGHT, renderRecordRow } from '../record-row.js';
import { VirtualList } from '../virtual-list.js';

interface Page {
  records: TraceRecord[];
  next: string | null;
}

/** Search over history with the api's filters and a time range; loads page after page into a virtual list. */
export function searchPage(
  root: HTMLElement,
  params: URLSearchParams,
  fields?: string[],
  title = 'Search',
  fixed: Record<string, string> = {},
): () => void {
  const list = new VirtualList<TraceRecord>(ROW_HEIGHT, renderRecordRow);
  const status = h('span', { class: 'status', id: 'search-status' }, '');
  const more = h('button', { type: 'button', id: 'more' }, 'Load more');
  const exportLinks = h('span', {});
  let query = new URLSearchParams();
  let next: string | null = null;
  let items: TraceRecord[] = [];

  const load = async () => {
    const q = new URLSearchParams(query);
    q.set('limit', '500');
    if (next) q.set('cursor', next);
    status.textContent = 'loading…';
    try {
      const page = await getJson<Page>(`/records?${q}`);
      items = items.concat(page.records);
      list.setItems(items);
      next = page.next;
      more.toggleAttribute('disabled', next === null);
      status.textContent = `${items.length} records${next ? ' (more available)' : ''}`;
    } catch (e) {
      status.textContent = (e as Error).message;
    }
  };
  const run = (q: URLSearchParams) => {
    query = q;
    for (const [k, v] of Object.entries(fixed)) query.set(k, v);
    if (!query.has('order')) query.set('order', 'desc');
    next = null;
    items = [];
    const exportable = q.has('session') || q.has('rig') || q.has('from');
    exportLinks.replaceChildren(
      ...(exportable
        ? ['qspy', 'ndjson', 'csv', 'raw'].map((f) => {
            const eq = new URLSearchParams(q);
            eq.delete('order');
            eq.set('format', f);
            return h('a', { href: streamUrl('/records/export', eq), class: 'export' }, ` ${f}`);
          })
        : []),
    );
    void load();
  };
  more.addEventListener('click', () => void load());
  const range = [
    h(
      'label',
      {},
      'from ',
      h('input', { name: 'from', placeholder: '2025-11-24T16:00:00Z', value: params.get('from') ?? '' }),
    ),
    h(
      'label',
      {},
      'to ',
      h('input', { name: 'to', placeholder: '2025-11-24T17:00:00Z', value: params.get('to') ?? '' }),
    ),
  ];
  const form = filterForm(
    fields ?? ['rig', 'link', 'session', 'name', 'kind', 'obj', 'sig', 'master', 'channel', 'text'],
    run,
    range,
    params,
  );
  root.append(
    h('h2', {}, title),
    form,
    h('div', { class: 'bar' }, more, status, ' export:', exportLinks),
    list.element,
  );
  if ([...params.keys()].length > 0) run(params);
  return () => {};
}
