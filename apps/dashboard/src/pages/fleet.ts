import type { ReportersReply, RigsReply } from '@tracehub/api-contract';
import { getJson, type LinkSummary } from '../api.js';
import { ago, h, headRow } from '../dom.js';
import { perLinkRates, ratePlots } from '../rate-plots.js';
import { reporterRows } from '../reporters-table.js';

type LinkState = 'connected' | 'idle' | 'down';

const STATE_HELP: Record<LinkState, string> = {
  connected: 'records arrived in the last 10 s',
  idle: 'records arrived in the last 10 minutes, none in the last 10 s',
  down: 'no records for 10 minutes',
};

/** What the link is doing, as far as its records tell: live data, quiet, or gone. */
function linkState(l: LinkSummary): LinkState {
  if (l.recordsPerSecond > 0) return 'connected';
  const age = l.lastSeen ? Date.now() - new Date(l.lastSeen).getTime() : Number.POSITIVE_INFINITY;
  if (age < 10_000) return 'connected';
  return age < 600_000 ? 'idle' : 'down';
}

/**
 * Every rig and link: live record rate, errors, gaps, last seen (refreshed every 2 s), under a
 * plot of each link's records/s over the URL's time range (the last hour unless it names one).
 */
export function fleetPage(root: HTMLElement, params: URLSearchParams): () => void {
  const table = h('table', { class: 'fleet' });
  const status = h('p', { class: 'status' }, 'loading…');
  const reporters = h('table', { class: 'fleet reporters' });
  const reportersTitle = h('h3', { hidden: true }, h('a', { href: '#/reporters' }, 'PalmTrace Reporters'));
  const plots = ratePlots(params, {
    path: 'fleet',
    since: async () => {
      const { rigs } = await getJson<RigsReply>('/rigs');
      const first = rigs.map((r) => r.firstSeen).sort()[0];
      return first ?? new Date(Date.now() - 3_600_000).toISOString();
    },
    plots: [{ id: 'fleet-rates', title: 'Records per second, per link', yLabel: 'records/s', series: perLinkRates }],
  });
  root.append(h('h2', {}, 'Fleet'), plots.element, status, table, reportersTitle, reporters);
  // The PalmTrace bridge's endpoints: a small panel below the links, shown when there are any.
  const loadReporters = async () => {
    const answer = await getJson<ReportersReply>('/reporters');
    reportersTitle.hidden = answer.reporters.length === 0 && answer.listener === null;
    reporters.replaceChildren(...reporterRows(answer));
  };
  const load = async () => {
    try {
      const { rigs } = await getJson<RigsReply>('/rigs');
      const head = headRow([
        'rig',
        'link',
        'protocol',
        'state',
        'rec/s',
        'records',
        'errors',
        'gaps',
        'sessions',
        'last seen',
        '',
      ]);
      const rows = rigs.flatMap((rig) =>
        rig.links.map((l) => {
          const where = `rig=${encodeURIComponent(l.rig)}&link=${encodeURIComponent(l.name)}`;
          const state = linkState(l);
          return h(
            'tr',
            { 'data-link': `${l.rig}/${l.name}` },
            h('td', {}, l.rig),
            h('td', {}, h('a', { href: `#/link/${l.id}` }, l.name)),
            h('td', {}, l.protocol),
            h('td', { class: `link-state ${state}`, title: STATE_HELP[state] }, state),
            h('td', { class: 'num rate' }, l.recordsPerSecond.toFixed(1)),
            h('td', { class: 'num', 'data-col': 'records' }, h('a', { href: `#/search?${where}` }, String(l.records))),
            h(
              'td',
              { class: l.errors > 0 ? 'num bad' : 'num' },
              h('a', { href: `#/search?${where}&kind=error` }, String(l.errors)),
            ),
            h(
              'td',
              { class: l.gaps > 0 ? 'num bad' : 'num' },
              h('a', { href: `#/search?${where}&name=SEQ_GAP` }, String(l.gaps)),
            ),
            h('td', { class: 'num' }, h('a', { href: `#/sessions?${where}` }, String(l.sessions))),
            h('td', {}, ago(l.lastSeen)),
            h(
              'td',
              {},
              h('a', { href: `#/live?${where}` }, 'tail'),
              ' ',
              l.latestSession
                ? h('a', { href: `#/session/${encodeURIComponent(l.latestSession)}` }, 'latest session')
                : '',
            ),
          );
        }),
      );
      table.replaceChildren(head, ...rows);
      status.textContent = `${rigs.length} rigs, ${rows.length} links`;
      await loadReporters().catch(() => reporters.replaceChildren());
    } catch (e) {
      status.textContent = String((e as Error).message);
    }
  };
  void load();
  const timer = setInterval(load, 2000);
  return () => {
    clearInterval(timer);
    plots.stop();
  };
}
