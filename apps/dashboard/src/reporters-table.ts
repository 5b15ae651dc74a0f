// The PalmTrace bridge's Reporter endpoints as a table: below the fleet, and on the Reporters page
// (there with a button to remove each).
import type { ReportersReply } from '@tracehub/api-contract';
import { h, headRow } from './dom.js';

/** The table's rows (none without endpoints or a listening port); `remove` adds a button per endpoint. */
export function reporterRows(
  { reporters: list, listener }: ReportersReply,
  remove?: (id: string) => void,
): HTMLTableRowElement[] {
  const titles = ['reporter', 'target', 'mode', 'connected', 'sent', 'bytes', 'dropped', 'reconnects', 'queued'];
  const head = headRow(remove ? [...titles, 'last error', ''] : titles);
  const rows = list.map((r) =>
    h(
      'tr',
      { 'data-reporter': r.id },
      h('td', {}, r.id),
      h('td', {}, `${r.host}:${r.port}`),
      h('td', {}, r.replay ? `replay (${r.replay.state}, ${r.replay.records} records)` : r.mode),
      h('td', { class: r.connected ? '' : 'bad' }, r.connected ? 'yes' : 'no'),
      h('td', { class: 'num' }, String(r.messagesSent)),
      h('td', { class: 'num' }, String(r.bytesSent)),
      h('td', { class: r.dropped > 0 ? 'num bad' : 'num' }, String(r.dropped)),
      h('td', { class: 'num' }, String(r.reconnects)),
      h('td', { class: 'num' }, String(r.queued)),
      remove ? h('td', { class: r.lastError ? 'bad' : '' }, r.lastError ?? '') : null,
      remove ? h('td', {}, h('button', { type: 'button', onclick: () => remove(r.id) }, 'remove')) : null,
    ),
  );
  if (listener)
    rows.push(
      h(
        'tr',
        {},
        h(
          'td',
          { colspan: String(head.children.length) },
          `listening on port ${listener.port}: ${listener.clients.length} clients`,
        ),
      ),
    );
  return rows.length > 0 ? [head, ...rows] : [];
}
