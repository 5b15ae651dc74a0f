import type { LinkSettingsPutReply, LinkSettingsReply, SettingName } from '@tracehub/api-contract';
import { ApiError, getJson, type LinkSummary, token } from '../../api.js';
import { h, headedTable, kv } from '../../dom.js';
import { download } from '../../download.js';
import { settingText as shown } from '../../setting-text.js';
import { settingsInUse } from './settings-in-use.js';

function changed(previous: Record<string, unknown>, next: Record<string, unknown>): string {
  const names = new Set([...Object.keys(previous), ...Object.keys(next)]);
  const parts: string[] = [];
  for (const name of names) {
    const before = previous[name];
    const after = next[name];
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    if (after === undefined) parts.push(`${name} removed`);
    else parts.push(`${name} = ${shown(name, after)}`);
  }
  return parts.join('; ') || 'no change';
}

/** The columns of the settings' changes, newest first. */
const CHANGE_COLUMNS = ['when', 'who', 'via', 'applies', 'change'];

/**
 * The link's settings: the stored document with who changed it when, a form to change one
 * setting (control scope; the value is sent as text, which the API reads as `tracehub link
 * set` does), the settings the protocol takes, those in use for the latest session, and for
 * QS links the qspy `.dic` file: give the link one, or save the dictionaries of its latest
 * session as one.
 */
export function linkSettingsSection(root: HTMLElement, link: LinkSummary): void {
  const base = `/api/v1/links/${link.id}/settings`;
  const table = h('table', { class: 'kv', id: 'settings-table' });
  const { table: history, body: historyBody } = headedTable({ class: 'fleet', id: 'settings-history' }, CHANGE_COLUMNS);
  const problem = h('p', { class: 'problem', id: 'settings-problem', hidden: true });
  const done = h('p', { class: 'status', id: 'settings-done', hidden: true });
  const names = h('datalist', { id: 'setting-names' });
  const name = h('input', {
    name: 'name',
    list: 'setting-names',
    placeholder: 'setting',
    size: 20,
    autocomplete: 'off',
  });
  const value = h('input', { name: 'value', placeholder: 'value (empty: remove)', size: 24 });
  const hint = h('p', { class: 'status setting-hint', id: 'settings-hint' });
  const { table: namesList, body: namesBody } = headedTable({ class: 'fleet' }, ['setting', 'values', 'what it is']);
  const namesTable = h(
    'details',
    { id: 'settings-names', open: true },
    // "a QS link", "an STP link", "an SWD link": as the letters are said.
    h('summary', {}, `Settings ${link.protocol === 'qs' ? 'a' : 'an'} ${link.protocol.toUpperCase()} link takes`),
    namesList,
  );
  const inUseBox = h('div', { id: 'settings-in-use-box' }, h('p', { class: 'status' }, 'loading…'));
  const applyNow = h('input', { type: 'checkbox', name: 'now' });
  const form = h(
    'form',
    { id: 'settings-form', class: 'inline' },
    name,
    ' = ',
    value,
    h(
      'label',
      { title: 'The gateway ends the session and starts a new one, so the decoder takes the change at once' },
      applyNow,
      ' apply now',
    ),
    h('button', { type: 'submit' }, 'Change'),
  );
  const dicInput = h('input', { type: 'file', accept: '.dic', id: 'dic-file' });
  const dicSave = h('button', { type: 'button', id: 'dic-save' }, "Save latest session's names as .dic");
  const dicRow = h('p', { class: 'dic' }, h('label', {}, 'Give the link a qspy .dic file: ', dicInput), ' ', dicSave);
  root.append(
    h(
      'section',
      { class: 'link-settings', id: 'link-settings' },
      h('h3', {}, 'Settings'),
      h(
        'div',
        { class: 'settings-columns' },
        h(
          'div',
          {},
          h('h4', {}, 'Stored, for the next session'),
          table,
          form,
          names,
          hint,
          link.protocol === 'qs' ? dicRow : '',
          problem,
          done,
        ),
        h('div', {}, h('h4', {}, 'In use for the latest session'), inUseBox),
      ),
      namesTable,
      h('h4', {}, 'Changes, newest first'),
      history,
    ),
  );

  let current: Record<string, unknown> = {};
  let accepts: SettingName[] = [];
  // What the named setting takes, under the form, as the value's placeholder too.
  const showHint = () => {
    const known = accepts.find((a) => a.name === name.value.trim());
    value.placeholder = known ? `${known.takes} (empty: remove)` : 'value (empty: remove)';
    hint.textContent = known ? `${known.name}: ${known.description}. Values: ${known.takes}.` : '';
    hint.hidden = !known;
  };
  name.addEventListener('input', showHint);
  const show = (reply: LinkSettingsReply) => {
    current = reply.settings;
    if (accepts.length === 0) {
      accepts = reply.accepts;
      names.replaceChildren(...accepts.map((a) => h('option', { value: a.name }, a.takes)));
      namesBody.replaceChildren(
        ...accepts.map((a) => {
          const pick = h('button', { type: 'button', class: 'link-button', title: 'change this setting' }, a.name);
          pick.addEventListener('click', () => {
            name.value = a.name;
            showHint();
            value.focus();
          });
          return h(
            'tr',
            { 'data-key': a.name },
            h('td', { class: 'mono' }, pick),
            h('td', {}, a.name === 'dictionaries' ? 'a qspy .dic file (the file button above)' : a.takes),
            h('td', {}, a.description),
          );
        }),
      );
      showHint();
    }
    inUseBox.replaceChildren(settingsInUse(reply.inUse, reply.settings));
    const entries = Object.entries(reply.settings);
    table.replaceChildren(
      ...(entries.length === 0
        ? [h('tr', {}, h('td', {}, 'No settings: every value is the decoder default.'))]
        : entries.map(([k, v]) => kv(k, shown(k, v), 'setting-value'))),
    );
    historyBody.replaceChildren(
      ...(reply.history.length === 0
        ? [h('tr', {}, h('td', { colspan: '5' }, 'Never changed.'))]
        : reply.history.map((c) =>
            h(
              'tr',
              {},
              h('td', { class: 'num' }, c.at.replace('T', ' ').slice(0, 19)),
              h('td', {}, c.by),
              h('td', {}, c.via),
              h('td', {}, c.applies === 'now' ? 'at once' : 'next session'),
              h('td', {}, changed(c.previous, c.settings)),
            ),
          )),
    );
  };
  const say = (text: string, isProblem: boolean) => {
    problem.hidden = !isProblem;
    done.hidden = isProblem;
    (isProblem ? problem : done).textContent = text;
  };
  const load = async () => show(await getJson<LinkSettingsReply>(`/links/${link.id}/settings`));

  /** Replaces the document with `settings`, and `text` (values as typed) read by the API over it. */
  async function put(settings: Record<string, unknown>, now: boolean, text?: Record<string, string>): Promise<void> {
    const res = await fetch(base, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ settings, ...(text && { text }), apply: now ? 'now' : 'next-session', via: 'dashboard' }),
    });
    const body = (await res.json()) as LinkSettingsPutReply & { detail?: string };
    if (!res.ok) {
      say(
        res.status === 403
          ? 'Changing settings needs a token with the control scope.'
          : (body.detail ?? `HTTP ${res.status}`),
        true,
      );
      return;
    }
    say(
      body.note ??
        (body.applies === 'now' ? `Applied: new session ${body.session}.` : 'Saved: applies from the next session.'),
      false,
    );
    await load();
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = name.value.trim();
    if (key === '') return say('Name the setting to change.', true);
    const next: Record<string, unknown> = { ...current };
    delete next[key];
    const text = value.value.trim();
    // The value goes as typed: the API reads `17,18`, `0x11` or `7.4.0` for the setting it names.
    await put(next, applyNow.checked, text === '' ? undefined : { [key]: text });
  });
  dicInput.addEventListener('change', async () => {
    const file = dicInput.files?.[0];
    if (!file) return;
    // qspy writes Latin-1: read the bytes as such, so the names arrive as they are in the file.
    const text = new TextDecoder('latin1').decode(await file.arrayBuffer());
    await put({ ...current, dictionaries: text }, false);
    dicInput.value = '';
  });
  dicSave.addEventListener('click', async () => {
    try {
      const sessions = await getJson<{ sessions: Array<{ id: string }> }>(
        `/sessions?rig=${encodeURIComponent(link.rig)}&link=${encodeURIComponent(link.name)}&limit=1`,
      );
      const latest = sessions.sessions[0];
      if (!latest) return say('The link has no stored session yet.', true);
      const res = await fetch(`/api/v1/sessions/${encodeURIComponent(latest.id)}/dictionaries.dic`, {
        headers: { authorization: `Bearer ${token()}` },
      });
      if (!res.ok) return say(`The .dic file could not be made (HTTP ${res.status}).`, true);
      download(`${latest.id}.dic`, await res.blob());
      say(`Saved the names of session ${latest.id}.`, false);
    } catch (e) {
      say(e instanceof ApiError ? e.message : (e as Error).message, true);
    }
  });
  void load().catch((e: Error) => say(e.message, true));
}
