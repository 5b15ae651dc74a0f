import { h } from './dom.js';

/** The record filters of the api, as a form: shared by live tail, search and the STP page. */
export const FILTER_FIELDS: Array<{ name: string; label: string; placeholder?: string; type?: string }> = [
  { name: 'rig', label: 'rig' },
  { name: 'link', label: 'link' },
  { name: 'session', label: 'session' },
  { name: 'name', label: 'name', placeholder: 'QS_QEP_TRAN,PHILO_STAT' },
  { name: 'kind', label: 'kind', placeholder: 'record,error' },
  { name: 'obj', label: 'QS obj' },
  { name: 'sig', label: 'QS sig' },
  { name: 'master', label: 'STP master', type: 'number' },
  { name: 'channel', label: 'STP channel', type: 'number' },
  { name: 'text', label: 'text contains' },
];

export function filterForm(
  fields: string[],
  onSubmit: (query: URLSearchParams) => void,
  extra: Node[] = [],
  initial: URLSearchParams = new URLSearchParams(),
): HTMLFormElement {
  const inputs = FILTER_FIELDS.filter((f) => fields.includes(f.name)).map((f) =>
    h(
      'label',
      {},
      `${f.label} `,
      h('input', {
        name: f.name,
        type: f.type ?? 'text',
        placeholder: f.placeholder ?? '',
        value: initial.get(f.name) ?? '',
      }),
    ),
  );
  const form = h('form', { class: 'filters' }, ...inputs, ...extra, h('button', { type: 'submit' }, 'Apply'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v.trim() !== '') q.set(k, v.trim());
    onSubmit(q);
  });
  return form;
}
