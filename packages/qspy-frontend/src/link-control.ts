import { type DecodedRecord, jsonSafe } from '@tracehub/contracts';
import { QS_RX_NAMES } from '@tracehub/qs';
import { buildCommand, CommandFieldError, type CommandSizes, type QsCommand } from './commands.js';
import { RxId } from './protocol.js';
import type { QsTargetLink } from './target-link.js';

/** What the target answered to one command. */
export type AnswerOutcome =
  /** QS_RX_STATUS acknowledged it (commands without a "done"). */
  | 'ack'
  /** Acknowledged and finished (QS_TARGET_DONE): COMMAND, TICK, EVENT. */
  | 'done'
  /** Data answered it: target info (INFO, RESET), peek data, query data. */
  | 'data'
  /** The target refused it (Trg-ERR). */
  | 'error'
  /** Nothing came in time. */
  | 'timeout'
  /** Nothing is expected (RESET of a target that exits to reset: QUTest host builds). */
  | 'none';

/** A decoded record of the answer, JSON-safe. */
export interface AnswerRecord {
  type: number;
  name: string;
  text: string;
  fields: Record<string, unknown>;
}

export interface CommandResult {
  ok: boolean;
  /** The QS-RX frame written (hex), its sequence number and length. */
  frame: string;
  rxSeq: number;
  written: number;
  /** Names looked up in the link's dictionaries. */
  resolved: Record<string, string>;
  outcome: AnswerOutcome;
  /** The record that settled it (the Trg-Ack, Trg-Done, Trg-ERR, peek or query data, target info). */
  answer: AnswerRecord | null;
  /** Every record the link produced from the write to the answer (the command's own output), at most 200. */
  records: AnswerRecord[];
  /** qspy's lines of those records. */
  text: string[];
  /** Why it is not ok. */
  error?: string;
}

/** A command that could not be sent: a bad field (the caller's mistake) or the link's state. */
export class CommandRejected extends Error {
  override name = 'CommandRejected';
  constructor(
    message: string,
    /** The field at fault, for a bad field. */
    readonly field?: string,
  ) {
    super(message);
  }
}

const MAX_RECORDS = 200;
const QS_TARGET_INFO = 64;
const QS_TARGET_DONE = 65;
const QS_RX_STATUS = 66;
const QS_QUERY_DATA = 67;
const QS_PEEK_DATA = 68;
/** Trg-ERR codes that are about the frame, not about the command: the answer still follows. */
const SEQUENCE_GAP_ERROR = 0x42;

/**
 * The link's control point: tracehub's commands go to the target through the link's own
 * `QsTargetLink` (so they share qspy's QS-RX counter and dictionaries with an attached
 * front-end), and each waits for the target's answer, read from the link's decoded records.
 * Commands run one at a time per link, so that an answer belongs to the command before it.
 */
export class QsLinkControl {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly target: QsTargetLink) {}

  /** Runs one command; rejects with `CommandRejected` if it cannot be sent. */
  execute(command: QsCommand, options: { timeoutMs: number; sizes?: Partial<CommandSizes> }): Promise<CommandResult> {
    const run = this.queue.then(() => this.run(command, options));
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(
    command: QsCommand,
    { timeoutMs, sizes }: { timeoutMs: number; sizes?: Partial<CommandSizes> },
  ): Promise<CommandResult> {
    let built: ReturnType<typeof buildCommand>;
    try {
      built = buildCommand(command, this.target, sizes);
    } catch (e) {
      if (e instanceof CommandFieldError) throw new CommandRejected(e.message, e.field);
      throw e;
    }
    const rxId = built.body[0];
    const records: AnswerRecord[] = [];
    let settle: (r: { outcome: AnswerOutcome; answer: AnswerRecord | null; error?: string }) => void = () => {};
    const settled = new Promise<{ outcome: AnswerOutcome; answer: AnswerRecord | null; error?: string }>((resolve) => {
      settle = resolve;
    });
    let acked: AnswerRecord | null = null;
    const stop = this.target.onRecord((record) => {
      const r = answerRecord(record);
      if (records.length < MAX_RECORDS) records.push(r);
      const verdict = judge(rxId, record, r, acked);
      if (verdict === 'acked') acked = r;
      else if (verdict) settle(verdict);
    });
    const sent = this.target.send(built.body);
    if ('reason' in sent) {
      stop();
      throw new CommandRejected(
        sent.reason === 'no-target'
          ? 'the target is not connected'
          : `the command's frame is ${sent.length} bytes; a target takes at most 512`,
      );
    }
    if (built.scope !== undefined) this.target.scope = built.scope;
    const timer = setTimeout(
      () =>
        settle(
          acked
            ? { outcome: 'ack', answer: acked, error: `acknowledged, but not done within ${timeoutMs} ms` }
            : rxId === RxId.RESET
              ? { outcome: 'none', answer: null }
              : { outcome: 'timeout', answer: null, error: `the target did not answer within ${timeoutMs} ms` },
        ),
      timeoutMs,
    );
    const verdict = await settled;
    clearTimeout(timer);
    stop();
    const ok = verdict.outcome !== 'error' && verdict.outcome !== 'timeout' && verdict.error === undefined;
    return {
      ok,
      frame: Buffer.from(sent.frame).toString('hex'),
      rxSeq: sent.seq,
      written: sent.frame.length,
      resolved: built.resolved,
      outcome: verdict.outcome,
      answer: verdict.answer,
      records,
      text: records.flatMap((r) => (r.text === '' ? [] : r.text.split('\n'))),
      ...(verdict.error ? { error: verdict.error } : {}),
    };
  }
}

function answerRecord(record: DecodedRecord): AnswerRecord {
  return {
    type: record.type,
    name: record.name,
    text: record.text,
    fields: jsonSafe(record.fields) as Record<string, unknown>,
  };
}

/** Whether a record answers the command with QS-RX id `rxId`. */
function judge(
  rxId: number,
  record: DecodedRecord,
  r: AnswerRecord,
  acked: AnswerRecord | null,
): { outcome: AnswerOutcome; answer: AnswerRecord; error?: string } | 'acked' | null {
  if (record.kind === 'error') return null;
  const f = record.fields;
  if (record.type === QS_RX_STATUS) {
    if (f.ack === true) {
      if (!sameCommand(f.command, rxId)) return null;
      return rxId === RxId.COMMAND || rxId === RxId.TICK || rxId === RxId.EVENT
        ? 'acked'
        : { outcome: 'ack', answer: r };
    }
    const code = typeof f.error === 'number' ? f.error : -1;
    if (code === SEQUENCE_GAP_ERROR) return null;
    // An error about this command, or about a frame the target could not take (checksum, unknown id, bad frame).
    if (code === rxId || code >= QS_RX_NAMES.length) {
      return { outcome: 'error', answer: r, error: `the target refused it: ${record.text.trim()}` };
    }
    return null;
  }
  if (record.type === QS_TARGET_DONE && acked && sameCommand(f.command, rxId)) return { outcome: 'done', answer: r };
  if (record.type === QS_TARGET_INFO && (rxId === RxId.INFO || rxId === RxId.RESET))
    return { outcome: 'data', answer: r };
  if (record.type === QS_PEEK_DATA && rxId === RxId.PEEK) return { outcome: 'data', answer: r };
  if (record.type === QS_QUERY_DATA && rxId === RxId.QUERY_CURR) return { outcome: 'data', answer: r };
  return null;
}

function sameCommand(name: unknown, rxId: number): boolean {
  return name === QS_RX_NAMES[rxId];
}
