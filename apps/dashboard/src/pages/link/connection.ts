import type { LinkConnection } from '@tracehub/api-contract';
import { ApiError, getJson, type LinkSummary } from '../../api.js';
import { ago, h, kv } from '../../dom.js';

const REFRESH_MS = 3000;

/** What each kind of source means for "the target" of the link. */
const SOURCE_KIND_TEXT: Record<string, string> = {
  'tcp-listen': 'the target connects to the gateway',
  'tcp-connect': 'the gateway connects to the target or trace box',
  serial: 'a serial port',
  udp: 'datagrams from the target',
  file: 'a capture replayed',
  stdin: "the gateway's standard input",
};

/**
 * The link's connection, for every protocol: whether a target is connected, who and since
 * when, what the gateway reads (for tcp-listen, what a second or a silent target meets) and
 * the connections it did not take. Asked again every few seconds; returns the stop.
 */
export function linkConnectionSection(root: HTMLElement, link: LinkSummary): () => void {
  const body = h('div', { id: 'link-connection' }, h('p', { class: 'status' }, 'asking the gateway…'));
  root.append(h('section', { class: 'link-connection' }, h('h3', {}, 'Connection'), body));
  let alive = true;

  const show = (c: LinkConnection) => {
    const rows = [
      kv('target', c.target ? `connected: ${c.target.address}` : 'not connected', c.targetConnected ? 'good' : 'bad'),
      kv('since', c.target ? `${c.target.since.replace('T', ' ').slice(0, 19)} UTC (${ago(c.target.since)})` : '—'),
      h(
        'tr',
        { 'data-key': 'session' },
        h('th', {}, 'session'),
        h('td', {}, c.session ? h('a', { href: `#/session/${encodeURIComponent(c.session)}` }, c.session) : '—'),
      ),
      h(
        'tr',
        { 'data-key': 'source' },
        h('th', {}, 'source'),
        h(
          'td',
          {},
          h('span', { class: 'mono' }, c.source.description),
          SOURCE_KIND_TEXT[c.source.kind] ? h('span', { class: 'aside' }, ` (${SOURCE_KIND_TEXT[c.source.kind]})`) : '',
        ),
      ),
    ];
    if (c.source.secondTarget) {
      rows.push(
        kv(
          'second target',
          c.source.secondTarget === 'replace'
            ? 'replaces the connected one (secondTarget=replace)'
            : 'is refused while one is connected (secondTarget=refuse)',
        ),
      );
    }
    if (c.source.idleTimeoutMs !== undefined) {
      rows.push(
        kv(
          'idle timeout',
          c.source.idleTimeoutMs > 0
            ? `${c.source.idleTimeoutMs / 1000} s: a connection that sends nothing that long after it opens is closed`
            : 'none: a silent connection is kept',
        ),
      );
    }
    if (c.source.kind === 'tcp-listen') {
      const n = c.notTaken;
      rows.push(
        kv(
          'not taken',
          `${n.refused} refused · ${n.replaced} replaced · ${n.idleClosed} closed for silence (since the gateway started)`,
          n.refused + n.replaced + n.idleClosed > 0 ? 'warn' : '',
        ),
      );
    }
    body.replaceChildren(h('table', { class: 'kv' }, ...rows));
  };

  const load = async () => {
    try {
      const c = await getJson<LinkConnection>(`/links/${link.id}/connection`);
      if (alive) show(c);
    } catch (e) {
      if (!alive) return;
      const why =
        e instanceof ApiError && e.status === 503
          ? 'No gateway serves this link: nothing answers on its control subject, so whether a target is connected is not known. This page asks again every few seconds.'
          : (e as Error).message;
      body.replaceChildren(h('p', { class: 'notice', id: 'connection-notice' }, why));
      if (e instanceof ApiError && (e.status === 401 || e.status === 403 || e.status === 404)) clearInterval(timer);
    }
  };
  void load();
  const timer = setInterval(load, REFRESH_MS);
  return () => {
    alive = false;
    clearInterval(timer);
  };
}
