/** A tiny element builder: h('div', {class: 'x'}, child, 'text'). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | ((e: Event) => void)> = {},
  ...children: Array<Node | string | null | undefined>
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (typeof v === 'boolean') {
      if (v) el.setAttribute(k, '');
    } else el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) el.append(c);
  return el;
}

export function hostTime(hostNs: string): string {
  const ms = Number(BigInt(hostNs) / 1_000_000n);
  const frac = (BigInt(hostNs) % 1_000_000_000n).toString().padStart(9, '0').slice(0, 6);
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}.${frac}`;
}

export function ago(iso: string | null): string {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(iso).toISOString().slice(0, 16).replace('T', ' ');
}

/** A table's header row: a `th` per column title. */
export function headRow(titles: readonly string[], attrs: Record<string, string> = {}): HTMLTableRowElement {
  return h('tr', attrs, ...titles.map((t) => h('th', {}, t)));
}

/** A diagram's legend: a `span` per entry, of its class (none when empty). */
export function legend(entries: ReadonlyArray<readonly [cls: string, text: string]>): HTMLParagraphElement {
  return h('p', { class: 'legend' }, ...entries.map(([cls, text]) => h('span', cls ? { class: cls } : {}, text)));
}

/** A table with a header row of these column titles, and its body for the caller to fill. */
export function headedTable(
  attrs: Record<string, string>,
  titles: readonly string[],
): { table: HTMLTableElement; body: HTMLTableSectionElement } {
  const body = h('tbody', {});
  return { table: h('table', attrs, h('thead', {}, headRow(titles)), body), body };
}

/** A row of a key/value table (`table.kv`): the key as its header, the value's cell of class `cls`. */
export function kv(key: string, value: string, cls = ''): HTMLTableRowElement {
  return h('tr', { 'data-key': key }, h('th', {}, key), h('td', { class: cls }, value));
}

/** `n` things, counted in English: `1 session`, `1,204 records`. */
export function count(n: number, what: string): string {
  return `${n.toLocaleString('en')} ${what}${n === 1 ? '' : 's'}`;
}
