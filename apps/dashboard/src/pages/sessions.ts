import type { Session, SessionsPage } from '@tracehub/api-contract';
import { getJson } from '../api.js';
import { ago, h, headRow } from '../dom.js';
import { filterForm } from '../filters.js';
import { pageQuery } from '../time-range.js';
import { writeViewState } from '../view-state.js';

/** How long a session lasted (or has lasted so far), as "1 h 02 min", "12.3 s". */
export function duration(startIso: string | null, endIso: string | null): string {
  if (!startIso) return '';
  const ms = (endIso ? new Date(endIso).getTime() : Date.now()) - new Date(startIso).getTime();
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000)
    return `${Math.floor(ms / 60_000)} min ${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')} s`;
  return `${Math.floor(ms / 3_600_000)} h ${String(Math.round((ms % 3_600_000) / 60_000)).padStart(2, '0')} min`;
}

/** Sessions newest first, filtered by rig, link and time range; each opens its session page. */
export function sessionsPage(root: HTMLElement, params: URLSearchParams): () => void {
  const table = h('table', { class: 'fleet sessions', id: 'sessions' });
  const status = h('span', { class: 'status', id: 'sessions-status' });
  const error = h('p', { class: 'problem', hidden: true });
  const more = h('button', { type: 'button', id: 'more-sessions', disabled: true }, 'Load more');
  let query = new URLSearchParams();
  let next: string | null = null;
  let rows: HTMLTableRowElement[] = [];
  let generation = 0;
  const head = headRow([
    'session',
    'rig / link',
    'protocol',
    'started',
    'duration',
    'records',
    'errors',
    'gaps',
    'state',
    '',
  ]);
  const rowOf = (s: Session) => {
    const id = encodeURIComponent(s.id);
    return h(
      'tr',
      { 'data-session': s.id },
      h('td', {}, h('a', { href: `#/session/${id}` }, s.id)),
      h('td', {}, `${s.rig} / ${s.link}`),
      h('td', {}, s.protocol),
      h('td', { title: s.startedAt }, `${s.startedAt.slice(0, 19).replace('T', ' ')} (${ago(s.startedAt)})`),
      h('td', { class: 'num' }, duration(s.firstRecordAt ?? s.startedAt, s.endedAt ?? s.lastRecordAt)),
      h('td', { class: 'num' }, h('a', { href: `#/search?session=${id}` }, s.records.toLocaleString('en'))),
      h(
        'td',
        { class: s.errors > 0 ? 'num bad' : 'num' },
        h('a', { href: `#/search?session=${id}&kind=error` }, String(s.errors)),
      ),
      h('td', { class: s.gaps > 0 ? 'num bad' : 'num' }, String(s.gaps)),
      h('td', {}, s.endedAt ? (s.complete ? 'complete' : 'ended') : 'open'),
      h('td', {}, h('a', { href: `#/timeline?session=${id}` }, 'timeline')),
    );
  };
  const load = async () => {
    const mine = generation;
    const q = pageQuery(new URLSearchParams(), query, 100, next);
    for (const k of ['rig', 'link']) if (query.has(k)) q.set(k, query.get(k)!);
    status.textContent = 'loading…';
    try {
      const page = await getJson<SessionsPage>(`/sessions?${q}`);
      if (mine !== generation) return;
      rows = rows.concat(page.sessions.map(rowOf));
      table.replaceChildren(head, ...rows);
      next = page.next;
      more.toggleAttribute('disabled', next === null);
      status.textContent = `${rows.length} sessions${next ? ' (more available)' : ''}`;
      error.hidden = true;
    } catch (e) {
      if (mine !== generation) return;
      table.replaceChildren();
      status.textContent = '';
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  };
  const run = (q: URLSearchParams) => {
    generation++;
    query = q;
    writeViewState('sessions', q);
    next = null;
    rows = [];
    void load();
  };
  more.addEventListener('click', () => void load());
  root.append(
    h('h2', {}, 'Sessions'),
    filterForm(['rig', 'link'], run, params, { timeRange: true }),
    error,
    h('div', { class: 'bar' }, more, status),
    table,
  );
  run(params);
  return () => {
    generation++;
  };
}
