import { getJson, type LinkSummary } from '../api.js';
import { ago, h } from '../dom.js';

interface Rig {
  name: string;
  lastSeen: string;
  links: LinkSummary[];
}

/** Every rig and link: live record rate, errors, gaps, last seen. Refreshes every 2 s. */
export function fleetPage(root: HTMLElement): () => void {
  const table = h('table', { class: 'fleet' });
  const status = h('p', { class: 'status' }, 'loading…');
  root.append(h('h2', {}, 'Fleet'), status, table);
  const load = async () => {
    try {
      const { rigs } = await getJson<{ rigs: Rig[] }>('/rigs');
      const head = h(
        'tr',
        {},
        ...['rig', 'link', 'protocol', 'rec/s', 'records', 'errors', 'gaps', 'sessions', 'last seen', ''].map((t) =>
          h('th', {}, t),
        ),
      );
      const rows = rigs.flatMap((rig) =>
        rig.links.map((l) =>
          h(
            'tr',
            { 'data-link': `${l.rig}/${l.name}` },
            h('td', {}, l.rig),
            h('td', {}, l.name),
            h('td', {}, l.protocol),
            h('td', { class: 'num rate' }, l.recordsPerSecond.toFixed(1)),
            h('td', { class: 'num' }, String(l.records)),
            h('td', { class: l.errors > 0 ? 'num bad' : 'num' }, String(l.errors)),
            h('td', { class: l.gaps > 0 ? 'num bad' : 'num' }, String(l.gaps)),
            h('td', { class: 'num' }, String(l.sessions)),
            h('td', {}, ago(l.lastSeen)),
            h(
              'td',
              {},
              h('a', { href: `#/live?rig=${l.rig}&link=${l.name}` }, 'tail'),
              ' ',
              l.latestSession
                ? h('a', { href: `#/session/${encodeURIComponent(l.latestSession)}` }, 'latest session')
                : '',
            ),
          ),
        ),
      );
      table.replaceChildren(head, ...rows);
      status.textContent = `${rigs.length} rigs, ${rows.length} links`;
    } catch (e) {
      status.textContent = String((e as Error).message);
    }
  };
  void load();
  const timer = setInterval(load, 2000);
  return () => clearInterval(timer);
}
