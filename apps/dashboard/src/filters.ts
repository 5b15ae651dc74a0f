import { h } from './dom.js';
import { timeRangePicker } from './time-range.js';

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

/** Time-range parameters a form carries besides its fields. */
const RANGE_KEYS = ['range', 'from', 'to'];

/**
 * A filter form that applies itself: a change of any field (after a short pause in typing)
 * or of the time range calls `onChange` with the form's parameters; Enter applies at once.
 */
export function filterForm(
  fields: string[],
  onChange: (query: URLSearchParams) => void,
  initial: URLSearchParams = new URLSearchParams(),
  options: { timeRange?: boolean } = {},
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
  let range = new URLSearchParams();
  for (const k of RANGE_KEYS) if (initial.has(k)) range.set(k, initial.get(k)!);
  const picker = options.timeRange
    ? timeRangePicker(initial, (p) => {
        range = p;
        apply();
      })
    : null;
  const form = h('form', { class: 'filters' }, ...inputs, picker);
  let timer = 0;
  const apply = () => {
    clearTimeout(timer);
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form))
      if (typeof v === 'string' && v.trim() !== '' && !RANGE_KEYS.includes(k)) q.set(k, v.trim());
    for (const [k, v] of range) q.set(k, v);
    onChange(q);
  };
  form.addEventListener('input', (e) => {
    if ((e.target as HTMLElement).closest('.time-range')) return;
    clearTimeout(timer);
    timer = window.setTimeout(apply, 400);
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    apply();
  });
  // Enter in a field submits even without a submit button.
  form.append(h('button', { type: 'submit', hidden: true }, 'Apply'));
  return form;
}
