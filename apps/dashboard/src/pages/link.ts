import type { CommandReply, ControlState, FrontEndPort } from '@tracehub/api-contract';
import { ApiError, getJson, type LinkSummary, postJson } from '../api.js';
import {
  COMMAND_GROUPS,
  type CommandSpec,
  commandBody,
  commandSummary,
  EVENT_TARGETS,
  type FieldSpec,
  fieldProblem,
  OBJECT_KINDS,
} from '../control-commands.js';
import { ago, h, headedTable } from '../dom.js';
import { ERROR_COLOR, GAP_COLOR, type RatesAnswer, ratePlots } from '../rate-plots.js';
import { linkConnectionSection } from './link-connection.js';
import { linkSettingsSection } from './link-settings.js';

/** A sent command and what came back, newest first in the history. */
interface HistoryEntry {
  at: Date;
  summary: string;
  reply?: CommandReply;
  /** Why it did not reach the target (no gateway, gateway timeout...). */
  failure?: string;
}

const OUTCOME_TEXT: Record<CommandReply['outcome'], string> = {
  ack: 'Trg-Ack',
  done: 'Trg-Done',
  data: 'data',
  error: 'Trg-ERR',
  timeout: 'no answer',
  none: 'sent',
};

const NAME_LISTS: Partial<Record<FieldSpec['kind'], 'objects' | 'functions' | 'signals' | 'commands'>> = {
  object: 'objects',
  signal: 'signals',
  function: 'functions',
  command: 'commands',
};

const HISTORY_LIMIT = 200;
const STATE_REFRESH_MS = 3000;

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

/** The columns of the commands sent from the page. */
const HISTORY_COLUMNS = ['time', 'command', 'seq', 'outcome', "target's answer"];

function controlPanel(root: HTMLElement, link: LinkSummary): () => void {
  const base = `/links/${link.id}`;
  const notice = h('p', { class: 'notice', id: 'control-notice', hidden: true });
  const commands = h('fieldset', { class: 'commands', id: 'control-commands', disabled: true });
  const stateBox = h('div', { class: 'control-state', id: 'control-state' });
  const portBox = h('div', { class: 'frontend-state', id: 'frontend-state' });
  const { table: history, body: historyBody } = headedTable(
    { class: 'fleet history', id: 'command-history' },
    HISTORY_COLUMNS,
  );
  historyBody.append(h('tr', {}, h('td', { colspan: '5', class: 'status' }, 'No commands sent from this page yet.')));
  const lists = h('div', { hidden: true });
  // The history stays with the browser tab (a reload or a look at another page keeps it).
  const historyKey = `tracehub.control-history.${link.id}`;
  const entries: HistoryEntry[] = loadHistory(historyKey);
  let names: ControlState['names'] = {};
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
        h('div', { class: 'control-left' }, commands, lists),
        h('div', { class: 'control-right' }, h('h4', {}, 'Target'), stateBox, h('h4', {}, 'Front-end port'), portBox),
      ),
      h('h4', {}, 'History'),
      history,
    ),
  );

  // One datalist per dictionary, shared by every field that takes such a name.
  const datalists = new Map<string, HTMLDataListElement>();
  const datalistFor = (list: string) => {
    let d = datalists.get(list);
    if (!d) {
      d = h('datalist', { id: `names-${list}` });
      datalists.set(list, d);
      lists.append(d);
    }
    return d;
  };

  for (const group of COMMAND_GROUPS) {
    commands.append(
      h('div', { class: 'command-group' }, h('h4', {}, group.title), ...group.commands.map((c) => commandForm(c))),
    );
  }

  function fieldInput(spec: CommandSpec, f: FieldSpec): HTMLElement {
    const id = `cmd-${spec.command}-${f.name}`;
    switch (f.kind) {
      case 'objectKind':
        return h('select', { id, name: f.name }, ...OBJECT_KINDS.map((k) => h('option', { value: k }, k)));
      case 'itemSize':
        return h(
          'select',
          { id, name: f.name },
          ...['1', '2', '4'].map((s) => h('option', { value: s }, `${s} byte${s === '1' ? '' : 's'}`)),
        );
      case 'eventTarget': {
        const select = h(
          'select',
          { id, name: f.name },
          ...EVENT_TARGETS.map(([v, label]) => h('option', { value: v }, label)),
        );
        const prio = h('input', {
          id: `${id}-post`,
          name: 'post',
          class: 'narrow',
          placeholder: 'prio',
          'aria-label': 'priority of the AO to post to',
          hidden: true,
        });
        select.addEventListener('change', () => {
          prio.hidden = select.value !== 'post';
        });
        return h('span', { class: 'event-target' }, select, prio);
      }
      case 'check':
        return h('input', { id, name: f.name, type: 'checkbox' });
      default: {
        const list = NAME_LISTS[f.kind];
        const input = h('input', {
          id,
          name: f.name,
          value: f.value ?? '',
          placeholder: f.placeholder ?? (list ? 'name or number' : ''),
          autocomplete: 'off',
          class: f.kind === 'list' ? 'wide' : f.kind === 'number' ? 'narrow' : '',
        });
        if (list) input.setAttribute('list', datalistFor(list).id);
        if (f.help) input.title = f.help;
        return input;
      }
    }
  }

  function commandForm(spec: CommandSpec): HTMLFormElement {
    // Commands without fields sit side by side, as QView's buttons do.
    const form = h('form', {
      class: spec.fields.length === 0 ? 'command bare' : 'command',
      'data-command': spec.command,
      title: spec.title,
    });
    const problems = h('ul', { class: 'field-problems', hidden: true });
    const button = h('button', { type: 'submit' }, spec.label);
    const fields = spec.fields.map((f) => {
      const input = fieldInput(spec, f);
      return h(
        'label',
        { class: f.kind === 'check' ? 'check' : '', 'data-field': f.name },
        h('span', {}, f.label),
        input,
      );
    });
    form.append(h('div', { class: 'command-row' }, button, ...fields), problems);
    // A field's problem goes once the field is changed.
    form.addEventListener('input', (e) => {
      const name = (e.target as HTMLInputElement).name;
      (e.target as HTMLElement).removeAttribute('aria-invalid');
      for (const li of problems.querySelectorAll(`li[data-field="${name}"]`)) li.remove();
      problems.hidden = problems.childElementCount === 0;
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void send(spec, form, problems, button);
    });
    return form;
  }

  async function send(
    spec: CommandSpec,
    form: HTMLFormElement,
    problems: HTMLUListElement,
    button: HTMLButtonElement,
  ): Promise<void> {
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
      record({ at: new Date(), summary: commandSummary(body), reply });
    } catch (e) {
      if (e instanceof ApiError && e.status === 400 && e.detail) {
        // A bad field: said under the form, next to the field; nothing was sent.
        const { field, sentence } = fieldProblem(spec, e.detail);
        if (field) form.querySelector(`[name="${field}"]`)?.setAttribute('aria-invalid', 'true');
        problems.append(h('li', { 'data-field': field ?? '' }, sentence));
        problems.hidden = false;
      } else {
        record({ at: new Date(), summary: commandSummary(body), failure: (e as Error).message });
        if (e instanceof ApiError) showAccess(e);
      }
    } finally {
      button.disabled = false;
      form.classList.remove('busy');
    }
  }

  function record(entry: HistoryEntry): void {
    entries.unshift(entry);
    entries.length = Math.min(entries.length, HISTORY_LIMIT);
    historyBody.replaceChildren(...entries.map(historyRow));
    try {
      sessionStorage.setItem(historyKey, JSON.stringify(entries));
    } catch {}
  }
  if (entries.length > 0) historyBody.replaceChildren(...entries.map(historyRow));

  function historyRow(entry: HistoryEntry): HTMLTableRowElement {
    const time = entry.at.toISOString().slice(11, 23);
    const r = entry.reply;
    if (!r) {
      return h(
        'tr',
        { class: 'outcome-failed' },
        h('td', { class: 'num' }, time),
        h('td', { class: 'mono' }, h('span', { class: 'summary' }, entry.summary)),
        h('td', {}, ''),
        h('td', {}, h('span', { class: 'badge failed' }, 'not sent')),
        h('td', {}, entry.failure ?? ''),
      );
    }
    const resolved = Object.entries(r.resolved).map(([n, v]) => `${n} = ${v}`);
    const answer = h('td', { class: 'answer' }, h('div', { class: 'mono' }, r.answer?.text.trim() ?? ''));
    if (r.error) answer.append(h('div', { class: 'answer-error' }, r.error));
    // The command's whole output (what the link produced up to the answer), as qspy prints it.
    if (r.text.length > 1) {
      answer.append(
        h('details', {}, h('summary', {}, `${r.text.length} lines`), h('pre', { class: 'output' }, r.text.join('\n'))),
      );
    }
    return h(
      'tr',
      { class: `outcome-${r.ok ? 'ok' : 'bad'}`, 'data-outcome': r.outcome },
      h('td', { class: 'num' }, time),
      h(
        'td',
        { class: 'mono', title: `frame ${r.frame}` },
        h('span', { class: 'summary' }, entry.summary),
        resolved.length ? h('div', { class: 'resolved' }, resolved.join(', ')) : '',
      ),
      h('td', { class: 'num' }, String(r.rxSeq)),
      h('td', {}, h('span', { class: `badge ${r.ok ? 'ok' : 'bad'}` }, OUTCOME_TEXT[r.outcome])),
      answer,
    );
  }

  /** Commands stay visible but cannot be sent, and the notice says why. */
  function readOnly(why: string): void {
    commands.disabled = true;
    notice.textContent = why;
    notice.hidden = false;
  }

  /** Why the panel is read-only, and whether asking again may help. */
  function showAccess(e: ApiError): boolean {
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
  }

  function showState(s: ControlState): void {
    commands.disabled = false;
    notice.hidden = true;
    if (!s.targetConnected) {
      notice.textContent = 'No target is connected to the link: a command will not reach it.';
      notice.hidden = false;
    }
    const t = s.target;
    const d = s.dictionaries;
    stateBox.replaceChildren(
      h(
        'table',
        { class: 'kv' },
        kv('target', s.targetConnected ? 'connected' : 'not connected', s.targetConnected ? 'good' : 'bad'),
        kv(
          'QP version',
          typeof t.version === 'number'
            ? `${Math.floor(t.version / 100)}.${Math.floor(t.version / 10) % 10}.${t.version % 10}`
            : '?',
        ),
        kv(
          'sizes',
          `object ptr ${t.objPtrSize} B · function ptr ${t.funPtrSize} B · signal ${t.sigSize} B${t.fromTarget ? '' : ' (defaults: no target info yet)'}`,
        ),
        kv(
          'dictionaries',
          [
            count(d.objects ?? 0, 'object'),
            count(d.signals ?? 0, 'signal'),
            count(d.functions ?? 0, 'function'),
            count(d.commands ?? 0, 'command'),
            count(d.userRecords ?? 0, 'user record'),
          ].join(' · '),
        ),
      ),
    );
    portBox.replaceChildren(frontEndTable(s.frontEnd));
    names = s.names ?? {};
    for (const [list, el] of datalists) {
      const wanted = names[list as keyof typeof names] ?? [];
      if (el.childElementCount === wanted.length && [...el.children].every((o, i) => o.textContent === wanted[i]))
        continue;
      el.replaceChildren(...wanted.map((n) => h('option', { value: n }, n)));
    }
  }

  function frontEndTable(fe: FrontEndPort | null): HTMLElement {
    if (!fe)
      return h(
        'p',
        { class: 'status' },
        'This link has no front-end port (add ?frontend=:7701 to its address for QView and QUTest).',
      );
    const channels = [fe.channels & 1 ? 'binary' : '', fe.channels & 2 ? 'text' : ''].filter(Boolean).join(' + ');
    const release = h(
      'button',
      {
        type: 'button',
        id: 'release-frontend',
        disabled: fe.peer === null,
        title: 'The front-end gets DETACH, and the next one to attach takes the port',
      },
      'Release port',
    );
    release.addEventListener('click', async () => {
      release.disabled = true;
      try {
        showState(await postJson<ControlState>(`${base}/frontend/release`));
      } catch (e) {
        if (e instanceof ApiError) showAccess(e);
      }
    });
    return h(
      'div',
      {},
      h(
        'table',
        { class: 'kv' },
        kv('listening', fe.listening),
        kv(
          'attached',
          fe.peer ? `${fe.peer.address}:${fe.peer.port}${channels ? ` (${channels})` : ' (detached)'}` : 'nobody',
          fe.peer ? 'good' : '',
        ),
        kv('last heard', fe.peer && fe.lastHeardMs ? ago(new Date(fe.lastHeardMs).toISOString()) : '—'),
        kv('datagrams', `${fe.datagramsIn} in · ${fe.datagramsOut} out`),
        kv(
          'not passed',
          `${fe.refused} refused (port held) · ${fe.ignored} malformed · ${fe.droppedSends} unsent (front-end too slow)`,
          fe.refused + fe.ignored + fe.droppedSends > 0 ? 'bad' : '',
        ),
      ),
      release,
    );
  }

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

function loadHistory(key: string): HistoryEntry[] {
  try {
    const saved = JSON.parse(sessionStorage.getItem(key) ?? '[]') as Array<HistoryEntry & { at: string }>;
    return saved.map((e) => ({ ...e, at: new Date(e.at) }));
  } catch {
    return [];
  }
}

function count(n: number, what: string): string {
  return `${n.toLocaleString('en')} ${what}${n === 1 ? '' : 's'}`;
}

function kv(key: string, value: string, cls = ''): HTMLTableRowElement {
  return h('tr', { 'data-key': key }, h('th', {}, key), h('td', { class: cls }, value));
}
