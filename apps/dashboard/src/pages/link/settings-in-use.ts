import type { SettingsInUse } from '@tracehub/api-contract';
import { h } from '../../dom.js';
import { settingText } from '../../setting-text.js';

/**
 * The settings the latest session was decoded with, each marked with where it came from: the
 * stored document, or the gateway's link address, which overrides a stored value (shown
 * beside it). Says so when the stored document changed after the session started.
 */
export function settingsInUse(inUse: SettingsInUse | null, storedNow: Record<string, unknown>): HTMLElement {
  if (!inUse) return h('p', { class: 'status' }, 'The link has no session yet.');
  const started = `${inUse.startedAt.replace('T', ' ').slice(0, 19)} UTC`;
  const head = h(
    'p',
    { class: 'status in-use-head' },
    'Session ',
    h('a', { href: `#/session/${encodeURIComponent(inUse.session)}` }, inUse.session),
    `, started ${started}:`,
  );
  const entries = Object.entries(inUse.settings);
  const table =
    entries.length === 0
      ? h('p', { class: 'status' }, 'Every value was the decoder default: none stored, none given by the gateway.')
      : h(
          'table',
          { class: 'kv', id: 'settings-in-use' },
          ...entries.map(([name, value]) => {
            const fromAddress = name in inUse.fromAddress;
            const overridden = fromAddress && name in inUse.stored;
            return h(
              'tr',
              { 'data-key': name, 'data-from': fromAddress ? 'address' : 'stored' },
              h('th', {}, name),
              h('td', { class: 'setting-value' }, settingText(name, value)),
              h(
                'td',
                {},
                fromAddress
                  ? h(
                      'span',
                      {
                        class: 'badge from-address',
                        title: "given with the gateway's link address (TRACEHUB_LINKS) or replay flags",
                      },
                      'link address',
                    )
                  : h('span', { class: 'badge stored' }, 'stored'),
                overridden
                  ? h('span', { class: 'overrides' }, ` overrides stored ${settingText(name, inUse.stored[name])}`)
                  : '',
              ),
            );
          }),
        );
  const changedSince =
    JSON.stringify(inUse.stored) !== JSON.stringify(storedNow)
      ? h('p', { class: 'status' }, 'The stored settings changed since it started: they apply from the next session.')
      : '';
  return h('div', {}, head, table, changedSince);
}
