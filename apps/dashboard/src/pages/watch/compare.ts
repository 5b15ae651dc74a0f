import type { CompareResult } from '@tracehub/api-contract';
import { getJson } from '../../api.js';
import { h, headedTable } from '../../dom.js';

/** Two sessions compared: record counts per source side by side, and where their sequences first differ. */
export function comparePage(root: HTMLElement, params: URLSearchParams): () => void {
  const a = h('input', { name: 'a', placeholder: 'session a', value: params.get('a') ?? '' });
  const b = h('input', { name: 'b', placeholder: 'session b', value: params.get('b') ?? '' });
  const form = h('form', { id: 'compare-form', class: 'filters' }, a, b, h('button', { type: 'submit' }, 'Compare'));
  const result = h('section', { id: 'comparison' });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/compare?a=${encodeURIComponent(a.value.trim())}&b=${encodeURIComponent(b.value.trim())}`;
  });
  root.append(h('h2', {}, 'Two runs compared'), form, result);
  if (!params.get('a') || !params.get('b')) return () => {};
  const controller = new AbortController();
  result.replaceChildren(h('p', { class: 'status' }, 'reading both sessions…'));
  getJson<CompareResult>(
    `/compare?a=${encodeURIComponent(params.get('a')!)}&b=${encodeURIComponent(params.get('b')!)}`,
    controller.signal,
  )
    .then((c) => result.replaceChildren(...comparison(c)))
    .catch((e: Error) => {
      if (!controller.signal.aborted) result.replaceChildren(h('p', { class: 'problem' }, e.message));
    });
  return () => controller.abort();
}

function comparison(c: CompareResult): Node[] {
  const d = c.divergence;
  const side = (label: string, r: NonNullable<CompareResult['divergence']>['a'], link: string | null) =>
    h(
      'div',
      { class: 'side' },
      h('h4', {}, label),
      r
        ? h('p', {}, h('code', {}, `#${r.seq} ${r.name} ${r.source} ${r.signal}`), h('br', {}), h('small', {}, r.text))
        : h('p', {}, 'ends here'),
      link ? h('a', { href: link.slice(link.indexOf('#')) }, 'open there') : '',
    );
  const divergence = d
    ? h(
        'section',
        { id: 'divergence', class: 'divergence' },
        h('h3', {}, `First divergence after ${d.index.toLocaleString('en')} aligned records`),
        side(c.a, d.a, d.linkA),
        side(c.b, d.b, d.linkB),
      )
    : h('p', { id: 'divergence', class: 'status' }, 'The two sequences agree record for record.');
  const { table, body } = headedTable({ class: 'fleet', id: 'compare-counts' }, [
    'source',
    'record',
    c.a,
    c.b,
    'difference',
  ]);
  // The names whose counts differ first, then the rest as the api orders them.
  const differing = [...c.counts].sort((x, y) => Math.abs(y.difference) - Math.abs(x.difference));
  for (const n of differing) {
    body.append(
      h(
        'tr',
        { class: n.difference === 0 ? '' : 'differs' },
        h('td', {}, n.source || '(none)'),
        h('td', {}, n.name),
        h('td', { class: 'num' }, String(n.a)),
        h('td', { class: 'num' }, String(n.b)),
        h(
          'td',
          { class: n.difference === 0 ? 'num' : 'num bad' },
          n.difference > 0 ? `+${n.difference}` : String(n.difference),
        ),
      ),
    );
  }
  return [
    h(
      'p',
      { class: 'status' },
      `${c.recordsA.toLocaleString('en')} records in ${c.a}, ${c.recordsB.toLocaleString('en')} in ${c.b}`,
    ),
    divergence,
    h('h3', {}, 'Records per source and name'),
    table,
  ];
}
