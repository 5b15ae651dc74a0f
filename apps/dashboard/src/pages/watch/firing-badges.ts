import type { Alert } from '@tracehub/api-contract';
import { getJson } from '../../api.js';
import { h } from '../../dom.js';

/**
 * Firing badges: the number of firing alerts beside the header's Alerts link, and a badge on
 * every row that names a link (`data-link="rig/link"`, the fleet page's rows), refreshed every
 * few seconds. Nothing is shown without a token that may read alerts.
 */
export function startFiringBadges(navLink: HTMLElement, main: HTMLElement): void {
  const count = h('span', { class: 'badge bad', id: 'firing-count', hidden: true });
  navLink.append(' ', count);
  const refresh = async () => {
    let firing: Alert[];
    try {
      firing = (await getJson<{ alerts: Alert[] }>('/alerts?state=firing')).alerts;
    } catch {
      count.hidden = true;
      return;
    }
    count.textContent = String(firing.length);
    count.hidden = firing.length === 0;
    const byLink = new Map<string, Alert[]>();
    for (const a of firing) byLink.set(`${a.rig}/${a.link}`, [...(byLink.get(`${a.rig}/${a.link}`) ?? []), a]);
    for (const row of main.querySelectorAll<HTMLElement>('[data-link]')) {
      row.querySelector('.firing-badge')?.remove();
      const alerts = byLink.get(row.dataset.link ?? '');
      if (!alerts) continue;
      const cell = row.firstElementChild ?? row;
      cell.append(
        h(
          'a',
          {
            class: 'badge bad firing-badge',
            href: '#/alerts?state=firing',
            title: alerts.map((a) => a.ruleName).join(', '),
          },
          `${alerts.length} firing`,
        ),
      );
    }
  };
  void refresh();
  setInterval(refresh, 5000);
  // A page drawn anew gets its badges at once.
  window.addEventListener('hashchange', () => setTimeout(refresh, 500));
}
