import { getJson, type LinkSummary } from '../../api.js';
import { ago, count, h } from '../../dom.js';
import { ERROR_COLOR, GAP_COLOR, type RatesAnswer, ratePlots } from '../../rate-plots.js';
import { linkConnectionSection } from './connection.js';
import { controlPanel } from './control-panel.js';
import { markersPanel } from './markers-panel.js';
import { linkSettingsSection } from './settings.js';

/**
 * A link: its counts, its connection and settings and, for a QS link, the control panel (a
 * control-scoped token): the QS-RX commands grouped as in QView, the history of what was sent
 * with the target's answer to each, and the front-end port (who is attached, release).
 */
export function linkPage(root: HTMLElement, id: string, params: URLSearchParams): () => void {
  const title = h('h2', {}, `Link ${id}`);
  const summary = h('p', { class: 'status' }, 'loading…');
  root.append(title, summary);
  let left = false;
  const stops: Array<() => void> = [];
  void (async () => {
    try {
      const link = await getJson<LinkSummary>(`/links/${encodeURIComponent(id)}`);
      const where = `rig=${encodeURIComponent(link.rig)}&link=${encodeURIComponent(link.name)}`;
      title.textContent = `${link.rig} / ${link.name}`;
      summary.replaceChildren(
        `${link.protocol.toUpperCase()} link · ${link.records.toLocaleString('en')} records · `,
        h('a', { href: `#/sessions?${where}` }, count(link.sessions, 'session')),
        ` · last seen ${ago(link.lastSeen)} · `,
        h('a', { href: `#/live?${where}` }, 'tail'),
        ' · ',
        h('a', { href: `#/search?${where}` }, 'search'),
      );
      if (left) return;
      const plots = ratePlots(params, {
        path: `link/${encodeURIComponent(id)}`,
        rig: link.rig,
        link: link.name,
        since: async () => (await getJson<{ firstSeen: string }>(`/rigs/${encodeURIComponent(link.rig)}`)).firstSeen,
        plots: [
          { id: 'link-rate', title: 'Records per second', yLabel: 'records/s', series: linkRate },
          { id: 'link-faults', title: 'Errors and gaps', yLabel: 'per bucket', series: linkFaults },
        ],
      });
      root.append(plots.element);
      stops.push(plots.stop);
      stops.push(linkConnectionSection(root, link));
      linkSettingsSection(root, link);
      root.append(markersPanel(link));
      if (link.protocol !== 'qs') {
        root.append(
          h(
            'p',
            { class: 'notice', id: 'control-notice' },
            `No control panel: commands are QS-RX, and this link carries ${link.protocol.toUpperCase()} trace.`,
          ),
        );
        return;
      }
      stops.push(controlPanel(root, link));
    } catch (e) {
      summary.textContent = (e as Error).message;
      summary.className = 'problem';
    }
  })();
  return () => {
    left = true;
    for (const stop of stops) stop();
  };
}

/** The link's records per second (`/rates` narrowed to the link answers it alone, or nothing). */
const linkRate = (answer: RatesAnswer) =>
  answer.links.map((l) => ({
    label: 'records/s',
    values: l.recordsPerSecond,
    color: '#1d5fa0',
    style: 'area' as const,
  }));

/** Its error records (bars) and sequence gaps (a line over them) in each bucket. */
const linkFaults = (answer: RatesAnswer) =>
  answer.links.flatMap((l) => [
    { label: 'errors', values: l.errors, color: ERROR_COLOR, style: 'bars' as const },
    { label: 'gaps', values: l.gaps, color: GAP_COLOR, style: 'steps' as const },
  ]);
