import type { SessionChannels } from '@tracehub/api-contract';
import { h, headRow, hostTime } from './dom.js';

/** `GET /sessions/{id}/channels`: an STP session's records per master and channel, its errors by name. */
export type SessionChannelsAnswer = SessionChannels;

/** Names shown in a row before "+n more" (all of them in its tooltip). */
const NAMES_SHOWN = 4;

/** A master or channel number as the STP texts print it (`M0040`, `C0480`) after the number the filters take. */
const numbered = (n: number) => h('span', { class: 'hex' }, `0x${n.toString(16).toUpperCase().padStart(4, '0')}`);

/** ns between two host times, as people read a span: "850 µs", "12.4 ms", "3.2 s", "4 min 05 s". */
export function nsSpan(firstNs: string, lastNs: string): string {
  const ns = Number(BigInt(lastNs) - BigInt(firstNs));
  if (ns < 1_000_000) return `${Math.round(ns / 1000)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  if (ns < 60e9) return `${(ns / 1e9).toFixed(1)} s`;
  return `${Math.floor(ns / 60e9)} min ${String(Math.round((ns % 60e9) / 1e9)).padStart(2, '0')} s`;
}

/** A host time of day to the µs; the date and the ns are in the tooltip (the session's date is above). */
const timeCell = (ns: string) =>
  h('td', { class: 'num time', title: `${hostTime(ns)} UTC (${ns} ns)` }, hostTime(ns).slice(11));

export interface ChannelTreeOptions {
  /** Where a channel's records are listed, with `session`, `master` and `channel` added. */
  recordsPath: string;
  /** Masters shown folded. */
  collapsed: Set<number>;
  /** Called with the folded masters whenever one is folded or unfolded. */
  onToggle: (collapsed: Set<number>) => void;
}

/**
 * The session's errors by name, then a tree of its masters, each unfolding into its channels
 * with their counts, errors, host-time span and record names. A channel opens its records.
 */
export function channelTree(data: SessionChannelsAnswer, options: ChannelTreeOptions): HTMLElement {
  const session = encodeURIComponent(data.session);
  const records = (q: string) => `#/${options.recordsPath}?session=${session}&${q}`;
  const errorNames = new Set(data.errors.map((e) => e.name));
  const collapsed = new Set(options.collapsed);

  const errorTotal = data.errors.reduce((n, e) => n + e.count, 0);
  const errors = h(
    'section',
    { class: 'stream-errors', id: 'stream-errors' },
    h('h4', {}, errorTotal ? `Errors of the stream: ${errorTotal.toLocaleString('en')}` : 'No error records'),
    data.errors.length
      ? h(
          'table',
          { class: 'kv' },
          ...data.errors.map((e) =>
            h(
              'tr',
              { 'data-error': e.name },
              h(
                'th',
                {},
                h('a', { href: `#/search?session=${session}&kind=error&name=${encodeURIComponent(e.name)}` }, e.name),
              ),
              h('td', { class: 'num bad' }, e.count.toLocaleString('en')),
            ),
          ),
        )
      : '',
  );

  const channelCount = data.masters.reduce((n, m) => n + m.channels.length, 0);
  const summary = h(
    'p',
    { class: 'status', id: 'channels-status' },
    `${data.records.toLocaleString('en')} records: ${data.masters.length} master${data.masters.length === 1 ? '' : 's'}, ${channelCount} channel${channelCount === 1 ? '' : 's'}`,
    data.unaddressed ? `; ${data.unaddressed.toLocaleString('en')} on no channel (markers, errors of the stream)` : '',
  );

  const head = headRow(['master / channel', 'records', 'errors', 'first (UTC)', 'last (UTC)', 'span', 'names'], {
    class: 'head',
  });
  const rows: HTMLTableRowElement[] = [head];
  for (const m of data.masters) {
    const channelRows = m.channels.map((c) => {
      const q = `master=${m.master}&channel=${c.channel}`;
      const shown = c.names.slice(0, NAMES_SHOWN);
      return h(
        'tr',
        { class: 'channel', 'data-channel': `${m.master}/${c.channel}`, hidden: collapsed.has(m.master) },
        h('td', { class: 'label' }, h('a', { href: records(q) }, `channel ${c.channel}`), numbered(c.channel)),
        h('td', { class: 'num', 'data-col': 'records' }, h('a', { href: records(q) }, c.records.toLocaleString('en'))),
        h(
          'td',
          { class: c.errors ? 'num bad' : 'num', 'data-col': 'errors' },
          c.errors ? h('a', { href: `#/search?session=${session}&kind=error&${q}` }, String(c.errors)) : '0',
        ),
        timeCell(c.firstHostNs),
        timeCell(c.lastHostNs),
        h('td', { class: 'num' }, nsSpan(c.firstHostNs, c.lastHostNs)),
        h(
          'td',
          { class: 'names', 'data-col': 'names', title: c.names.join('\n') },
          ...shown.map((n) => h('span', { class: errorNames.has(n) ? 'name bad' : 'name' }, n)),
          c.names.length > shown.length ? h('span', { class: 'more' }, `+${c.names.length - shown.length} more`) : '',
        ),
      );
    });
    const toggle = h('button', {
      type: 'button',
      class: 'toggle',
      'aria-expanded': String(!collapsed.has(m.master)),
      title: 'fold or unfold the channels',
    });
    const showFolded = () => {
      const folded = collapsed.has(m.master);
      toggle.textContent = folded ? '▸' : '▾';
      toggle.setAttribute('aria-expanded', String(!folded));
      for (const row of channelRows) row.hidden = folded;
    };
    toggle.addEventListener('click', () => {
      if (collapsed.has(m.master)) collapsed.delete(m.master);
      else collapsed.add(m.master);
      showFolded();
      options.onToggle(new Set(collapsed));
    });
    showFolded();
    const first = m.channels.reduce(
      (t, c) => (BigInt(c.firstHostNs) < BigInt(t) ? c.firstHostNs : t),
      m.channels[0].firstHostNs,
    );
    const last = m.channels.reduce(
      (t, c) => (BigInt(c.lastHostNs) > BigInt(t) ? c.lastHostNs : t),
      m.channels[0].lastHostNs,
    );
    rows.push(
      h(
        'tr',
        { class: 'master', 'data-master': String(m.master) },
        h(
          'td',
          { class: 'label' },
          toggle,
          h('a', { href: records(`master=${m.master}`) }, `master ${m.master}`),
          numbered(m.master),
        ),
        h('td', { class: 'num', 'data-col': 'records' }, m.records.toLocaleString('en')),
        h('td', { class: m.errors ? 'num bad' : 'num', 'data-col': 'errors' }, String(m.errors)),
        timeCell(first),
        timeCell(last),
        h('td', { class: 'num' }, nsSpan(first, last)),
        h('td', { class: 'names' }, `${m.channels.length} channel${m.channels.length === 1 ? '' : 's'}`),
      ),
      ...channelRows,
    );
  }
  const tree = data.masters.length
    ? h('table', { class: 'fleet channel-tree', id: 'channel-tree' }, ...rows)
    : h('p', { class: 'notice' }, 'No record of this session is addressed to a master and channel.');
  return h('div', { class: 'channels' }, errors, summary, tree);
}
