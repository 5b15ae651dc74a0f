import type { Alert } from '@tracehub/api-contract';
import { getJson, postJson } from '../../api.js';
import { ago, h, headedTable } from '../../dom.js';

/** A dashboard link of an alert as a hash within this dashboard (its `dashboardUrl` may name another origin). */
const hashOf = (url: string) => url.slice(url.indexOf('#'));

/** Alerts, newest first (firing ones, or all): each opens the dashboard at its moment, and can be acknowledged. */
export function alertsPage(root: HTMLElement, params: URLSearchParams): () => void {
  const { table, body } = headedTable({ class: 'fleet', id: 'alerts' }, [
    'state',
    'rule',
    'rig / link',
    'cause at',
    'fired',
    'resolved',
    'summary',
    'acknowledged',
    '',
  ]);
  const status = h('p', { class: 'status', id: 'alerts-status' });
  const error = h('p', { class: 'problem', hidden: true });
  const onlyFiring = h('input', { type: 'checkbox', id: 'only-firing', checked: params.get('state') === 'firing' });
  const query = () => {
    const q = new URLSearchParams();
    if (onlyFiring.checked) q.set('state', 'firing');
    const rule = params.get('rule');
    if (rule) q.set('rule', rule);
    return q;
  };
  const acknowledge = async (a: Alert) => {
    const by = prompt('Acknowledged by', 'me');
    if (!by) return;
    try {
      await postJson(`/alerts/${a.id}/acknowledge`, { by });
      await load();
    } catch (e) {
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  };
  const load = async () => {
    try {
      const { alerts } = await getJson<{ alerts: Alert[] }>(`/alerts?${query()}`);
      body.replaceChildren(
        ...alerts.map((a) =>
          h(
            'tr',
            { 'data-alert': String(a.id), class: a.state },
            h('td', {}, h('span', { class: a.state === 'firing' ? 'badge bad' : 'badge ok' }, a.state)),
            h('td', {}, a.ruleName),
            h('td', {}, `${a.rig} / ${a.link}`),
            h('td', { title: a.at }, a.at.slice(0, 23).replace('T', ' ')),
            h('td', {}, ago(a.firedAt)),
            h('td', {}, a.resolvedAt ? ago(a.resolvedAt) : ''),
            h('td', {}, a.summary),
            h('td', {}, a.acknowledgedBy ? `${a.acknowledgedBy}, ${ago(a.acknowledgedAt)}` : ''),
            h(
              'td',
              {},
              h('a', { href: hashOf(a.dashboardUrl) }, a.seq === null ? 'sessions' : `record #${a.seq}`),
              ' ',
              a.acknowledgedAt
                ? ''
                : h('button', { type: 'button', class: 'ack', onclick: () => acknowledge(a) }, 'acknowledge'),
            ),
          ),
        ),
      );
      const firing = alerts.filter((a) => a.state === 'firing').length;
      status.textContent = `${alerts.length} alerts, ${firing} firing`;
      error.hidden = true;
    } catch (e) {
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  };
  onlyFiring.addEventListener('change', () => void load());
  root.append(
    h('h2', {}, params.get('rule') ? `Alerts of ${params.get('rule')}` : 'Alerts'),
    h('label', {}, onlyFiring, ' firing only'),
    error,
    status,
    table,
  );
  void load();
  const timer = setInterval(load, 5000);
  return () => clearInterval(timer);
}
