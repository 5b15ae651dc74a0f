import { h } from './dom.js';

/** Relative ranges the picker offers, as `range=` values of the URL. */
export const RELATIVE_RANGES: ReadonlyArray<{ value: string; label: string; ms: number }> = [
  { value: '5m', label: 'last 5 minutes', ms: 5 * 60_000 },
  { value: '15m', label: 'last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'last hour', ms: 3_600_000 },
  { value: '6h', label: 'last 6 hours', ms: 6 * 3_600_000 },
  { value: '24h', label: 'last 24 hours', ms: 24 * 3_600_000 },
  { value: '7d', label: 'last 7 days', ms: 7 * 24 * 3_600_000 },
  { value: '30d', label: 'last 30 days', ms: 30 * 24 * 3_600_000 },
];

/**
 * The time range of a view's URL as the api's `from`/`to`: `range=15m` (relative to now),
 * `from=`/`to=` (absolute, RFC 3339), or nothing (all of history).
 */
export function resolveTimeRange(params: URLSearchParams, now = Date.now()): { from?: string; to?: string } {
  const relative = RELATIVE_RANGES.find((r) => r.value === params.get('range'));
  if (relative) return { from: new Date(now - relative.ms).toISOString() };
  const out: { from?: string; to?: string } = {};
  const from = params.get('from');
  const to = params.get('to');
  if (from) out.from = from;
  if (to) out.to = to;
  return out;
}

/**
 * The query of a page of the api: the page's time range (a relative one resolved now) as
 * `from`/`to`, `limit`, and the cursor of the page to continue from.
 */
export function pageQuery(
  q: URLSearchParams,
  range: URLSearchParams,
  limit: number,
  cursor: string | null,
): URLSearchParams {
  for (const k of ['range', 'from', 'to']) q.delete(k);
  const { from, to } = resolveTimeRange(range);
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  q.set('limit', String(limit));
  if (cursor) q.set('cursor', cursor);
  return q;
}

/** `2025-11-24T16:00:00.000Z` as the value of a `datetime-local` input (UTC, to the ms). */
const toLocalInput = (iso: string | null) => (iso ? iso.replace(/Z$/, '').slice(0, 23) : '');
const fromLocalInput = (value: string) => (value ? new Date(`${value}Z`).toISOString() : '');

/**
 * A time-range picker: relative ranges ("last 15 minutes") or an absolute from/to picked with
 * the browser's date-time inputs (UTC). Calls `onChange` with the URL parameters it stands for.
 */
export function timeRangePicker(initial: URLSearchParams, onChange: (params: URLSearchParams) => void): HTMLElement {
  const select = h(
    'select',
    { name: 'range', id: 'time-range' },
    h('option', { value: '' }, 'all time'),
    ...RELATIVE_RANGES.map((r) => h('option', { value: r.value }, r.label)),
    h('option', { value: 'custom' }, 'from … to (UTC)'),
  );
  const from = h('input', {
    type: 'datetime-local',
    step: '0.001',
    id: 'time-from',
    value: toLocalInput(initial.get('from')),
  });
  const to = h('input', {
    type: 'datetime-local',
    step: '0.001',
    id: 'time-to',
    value: toLocalInput(initial.get('to')),
  });
  const absolute = h('span', { class: 'absolute-range' }, from, ' → ', to);
  const custom = initial.has('from') || initial.has('to');
  select.value = custom ? 'custom' : (initial.get('range') ?? '');
  absolute.hidden = select.value !== 'custom';
  const emit = () => {
    const p = new URLSearchParams();
    if (select.value === 'custom') {
      if (from.value) p.set('from', fromLocalInput(from.value));
      if (to.value) p.set('to', fromLocalInput(to.value));
    } else if (select.value) p.set('range', select.value);
    absolute.hidden = select.value !== 'custom';
    onChange(p);
  };
  select.addEventListener('change', emit);
  from.addEventListener('change', emit);
  to.addEventListener('change', emit);
  return h('span', { class: 'time-range' }, 'time ', select, absolute);
}
