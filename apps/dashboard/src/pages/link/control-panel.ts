import type { CommandReply, ControlState } from '@tracehub/api-contract';
import { ApiError, getJson, type LinkSummary, postJson } from '../../api.js';
import { COMMAND_GROUPS, type CommandSpec, commandBody, commandSummary, fieldProblem } from '../../control-commands.js';
import { h } from '../../dom.js';
import { commandForm, DictionaryNames } from './command-forms.js';
import { CommandHistory } from './command-history.js';
import { frontEndTable, targetTable } from './control-state.js';

const STATE_REFRESH_MS = 3000;

/**
 * A QS link's control panel: the QS-RX commands grouped as in QView, read-only (and saying
 * why) when the token may not control or no gateway serves the link, the history of what was
 * sent, and the target and front-end port, asked again every few seconds. Returns the stop.
 */
export function controlPanel(root: HTMLElement, link: LinkSummary): () => void {
  const base = `/links/${link.id}`;
  const notice = h('p', { class: 'notice', id: 'control-notice', hidden: true });
  const commands = h('fieldset', { class: 'commands', id: 'control-commands', disabled: true });
  const stateBox = h('div', { class: 'control-state', id: 'control-state' });
  const portBox = h('div', { class: 'frontend-state', id: 'frontend-state' });
  const history = new CommandHistory(link.id);
  const names = new DictionaryNames();
  let alive = true;

  root.append(
    h(
      'section',
      { class: 'control-panel' },
      h('h3', {}, 'Control'),
      notice,
      h(
        'div',
        { class: 'control-columns' },
        h('div', { class: 'control-left' }, commands, names.element),
        h('div', { class: 'control-right' }, h('h4', {}, 'Target'), stateBox, h('h4', {}, 'Front-end port'), portBox),
      ),
      h('h4', {}, 'History'),
      history.table,
    ),
  );

  const send = async (
    spec: CommandSpec,
    form: HTMLFormElement,
    problems: HTMLUListElement,
    button: HTMLButtonElement,
  ): Promise<void> => {
    const values: Record<string, string | boolean> = {};
    for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')) {
      values[el.name] = el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value;
      el.removeAttribute('aria-invalid');
    }
    problems.hidden = true;
    problems.replaceChildren();
    const body = commandBody(spec, values);
    button.disabled = true;
    form.classList.add('busy');
    try {
      const reply = await postJson<CommandReply>(`${base}/commands`, { command: body, answerTimeoutMs: 2000 });
      history.record({ at: new Date(), summary: commandSummary(body), reply });
    } catch (e) {
      if (e instanceof ApiError && e.status === 400 && e.detail) {
        // A bad field: said under the form, next to the field; nothing was sent.
        const { field, sentence } = fieldProblem(spec, e.detail);
        if (field) form.querySelector(`[name="${field}"]`)?.setAttribute('aria-invalid', 'true');
        problems.append(h('li', { 'data-field': field ?? '' }, sentence));
        problems.hidden = false;
      } else {
        history.record({ at: new Date(), summary: commandSummary(body), failure: (e as Error).message });
        if (e instanceof ApiError) showAccess(e);
      }
    } finally {
      button.disabled = false;
      form.classList.remove('busy');
    }
  };

  for (const group of COMMAND_GROUPS) {
    commands.append(
      h(
        'div',
        { class: 'command-group' },
        h('h4', {}, group.title),
        ...group.commands.map((c) => commandForm(c, names, (...args) => void send(...args))),
      ),
    );
  }

  /** Commands stay visible but cannot be sent, and the notice says why. */
  const readOnly = (why: string): void => {
    commands.disabled = true;
    notice.textContent = why;
    notice.hidden = false;
  };

  /** Why the panel is read-only, and whether asking again may help. */
  const showAccess = (e: ApiError): boolean => {
    if (e.status === 401 || e.status === 403) {
      readOnly(
        'Read-only: this token may read trace but not control targets. Paste a token with the control scope in the header to send commands.',
      );
      return false;
    }
    if (e.status === 503)
      readOnly(
        `${e.message} Commands cannot reach the target until a gateway serves the link; this page asks again every few seconds.`,
      );
    else readOnly(e.message);
    return true;
  };

  const release = async (): Promise<void> => {
    try {
      showState(await postJson<ControlState>(`${base}/frontend/release`));
    } catch (e) {
      if (e instanceof ApiError) showAccess(e);
    }
  };

  const showState = (s: ControlState): void => {
    commands.disabled = false;
    notice.hidden = true;
    if (!s.targetConnected) {
      notice.textContent = 'No target is connected to the link: a command will not reach it.';
      notice.hidden = false;
    }
    stateBox.replaceChildren(targetTable(s));
    portBox.replaceChildren(frontEndTable(s.frontEnd, release));
    names.show(s.names);
  };

  const load = async () => {
    try {
      const s = await getJson<ControlState>(`${base}/control`);
      if (alive) showState(s);
    } catch (e) {
      if (!alive) return;
      stateBox.replaceChildren(h('p', { class: 'status' }, 'not known (see above)'));
      portBox.replaceChildren(h('p', { class: 'status' }, 'not known (see above)'));
      if (!(e instanceof ApiError)) readOnly((e as Error).message);
      else if (!showAccess(e)) clearInterval(timer);
    }
  };
  void load();
  const timer = setInterval(load, STATE_REFRESH_MS);
  return () => {
    alive = false;
    clearInterval(timer);
  };
}
