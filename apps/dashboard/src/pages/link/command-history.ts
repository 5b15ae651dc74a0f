import type { CommandReply } from '@tracehub/api-contract';
import { h, headedTable } from '../../dom.js';

/** A sent command and what came back, newest first in the history. */
export interface HistoryEntry {
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

const HISTORY_LIMIT = 200;

/** The columns of the commands sent from the page. */
const HISTORY_COLUMNS = ['time', 'command', 'seq', 'outcome', "target's answer"];

/**
 * The commands sent to a link from the page, newest first, each with the target's answer or
 * why it was not sent. The history stays with the browser tab (a reload or a look at another
 * page keeps it).
 */
export class CommandHistory {
  readonly table: HTMLTableElement;
  private readonly body: HTMLTableSectionElement;
  private readonly key: string;
  private readonly entries: HistoryEntry[];

  constructor(linkId: number) {
    const { table, body } = headedTable({ class: 'fleet history', id: 'command-history' }, HISTORY_COLUMNS);
    this.table = table;
    this.body = body;
    body.append(h('tr', {}, h('td', { colspan: '5', class: 'status' }, 'No commands sent from this page yet.')));
    this.key = `tracehub.control-history.${linkId}`;
    this.entries = loadHistory(this.key);
    if (this.entries.length > 0) body.replaceChildren(...this.entries.map(historyRow));
  }

  record(entry: HistoryEntry): void {
    this.entries.unshift(entry);
    this.entries.length = Math.min(this.entries.length, HISTORY_LIMIT);
    this.body.replaceChildren(...this.entries.map(historyRow));
    try {
      sessionStorage.setItem(this.key, JSON.stringify(this.entries));
    } catch {}
  }
}

function loadHistory(key: string): HistoryEntry[] {
  try {
    const saved = JSON.parse(sessionStorage.getItem(key) ?? '[]') as Array<HistoryEntry & { at: string }>;
    return saved.map((e) => ({ ...e, at: new Date(e.at) }));
  } catch {
    return [];
  }
}

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
