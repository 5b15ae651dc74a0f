import { type DecodedRecord, jsonSafe } from '@tracehub/contracts';
import { QS_RX_NAMES, QsRecordId, QsRxId } from '@tracehub/qs';
import {
  buildCommand,
  CommandFieldError,
  type CommandSizes,
  type QsCommand,
  type QsCommandRequest,
} from './commands.js';
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
/** Trg-ERR codes that are about the frame, not about the command: the answer still follows. */
const SEQUENCE_GAP_ERROR = 0x42;

type Verdict = { outcome: AnswerOutcome; answer: AnswerRecord | null; error?: string };

/** A frame written to the target and not answered yet, from whichever sender. */
interface AwaitedFrame {
  id: number;
  /** When it was written (performance.now()). */
  at: number;
  /** Its Trg-Ack, for a command that is done only with a Trg-Done. */
  acked: AnswerRecord | null;
  /** tracehub's command waiting for this answer; a front-end's frame has none. */
  settle?: (verdict: Verdict) => void;
}

/** A front-end's frame with no answer after this long is forgotten (the target dropped it). */
const FORGET_UNANSWERED_MS = 5000;
/** Frames awaited at most (a front-end that sends faster than the target answers). */
const MAX_AWAITED = 256;

/**
 * The link's control point: tracehub's commands go to the target through the link's own
 * `QsTargetLink` (so they share qspy's QS-RX counter and dictionaries with an attached
 * front-end), and each waits for the target's answer, read from the link's decoded records.
 *
 * QS-RX answers carry no sequence number, but a target answers frames in the order it reads
 * them. So every frame written to the link, tracehub's and the front-end port's alike, joins
 * one queue, and each answer settles the oldest frame it can answer: a command sent while a
 * front-end's command of the same kind is still unanswered gets its own answer, not that one.
 * tracehub's commands run one at a time per link.
 */
export class QsLinkControl {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly awaited: AwaitedFrame[] = [];
  /** Set while tracehub's own frame is being written, to tie it to its waiter. */
  private claim: ((verdict: Verdict) => void) | undefined;

  constructor(private readonly target: QsTargetLink) {
    target.onSent((frame) => this.sent(frame.id));
    // Answers are looked for only while a frame waits for one.
    target.onRecord(
      (record) => this.attribute(record),
      () => this.awaited.length > 0,
    );
  }

  /** Runs one command; rejects with `CommandRejected` if it cannot be sent. */
  execute(
    command: QsCommand | QsCommandRequest,
    options: { timeoutMs: number; sizes?: Partial<CommandSizes> },
  ): Promise<CommandResult> {
    const run = this.queue.then(() => this.run(command, options));
    this.queue = run.catch(() => {});
    return run;
  }

  /** The target went away (or a new one came): nothing written before will be answered. */
  targetChanged(): void {
    for (const frame of this.awaited.splice(0)) frame.settle?.(unanswered(frame, 'the target disconnected'));
  }

  private sent(id: number): void {
    const now = performance.now();
    for (let i = this.awaited.length - 1; i >= 0; i--) {
      if (!this.awaited[i].settle && now - this.awaited[i].at > FORGET_UNANSWERED_MS) this.awaited.splice(i, 1);
    }
    if (this.awaited.length >= MAX_AWAITED) {
      const oldest = this.awaited.shift() as AwaitedFrame;
      oldest.settle?.(unanswered(oldest, `${MAX_AWAITED} later frames were sent before its answer came`));
    }
    this.awaited.push({ id, at: now, acked: null, settle: this.claim });
    this.claim = undefined;
  }

  /** Gives an answer to the oldest awaited frame it answers; the frames before it got none. */
  private attribute(record: DecodedRecord): void {
    if (record.type < QsRecordId.QS_TARGET_INFO || record.type > QsRecordId.QS_PEEK_DATA || record.kind === 'error')
      return;
    const r = answerRecord(record);
    for (let i = 0; i < this.awaited.length; i++) {
      const frame = this.awaited[i];
      const verdict = judge(frame.id, record, r, frame.acked);
      if (verdict === null) continue;
      for (const skipped of this.awaited.splice(0, i)) {
        skipped.settle?.(unanswered(skipped, 'the target answered a later command first'));
      }
      if (verdict === 'acked') frame.acked = r;
      else {
        this.awaited.shift();
        frame.settle?.(verdict);
      }
      return;
    }
    if (record.type === QsRecordId.QS_TARGET_INFO && record.fields.reset === true) {
      for (const frame of this.awaited.splice(0)) frame.settle?.(unanswered(frame, 'the target reset'));
    }
  }

  private async run(
    command: QsCommand | QsCommandRequest,
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
    let settle: (verdict: Verdict) => void = () => {};
    const settled = new Promise<Verdict>((resolve) => {
      settle = resolve;
    });
    const stop = this.target.onRecord((record) => {
      if (records.length < MAX_RECORDS) records.push(answerRecord(record));
    });
    this.claim = settle;
    const sent = this.target.send(built.body);
    this.claim = undefined;
    if ('reason' in sent) {
      stop();
      throw new CommandRejected(
        sent.reason === 'no-target'
          ? 'the target is not connected'
          : `the command's frame is ${sent.length} bytes; a target takes at most 512`,
      );
    }
    if (built.scope !== undefined) this.target.scope = built.scope;
    const timer = setTimeout(() => {
      const at = this.awaited.findIndex((f) => f.settle === settle);
      const acked = at >= 0 ? this.awaited.splice(at, 1)[0].acked : null;
      settle(
        acked
          ? { outcome: 'ack', answer: acked, error: `acknowledged, but not done within ${timeoutMs} ms` }
          : rxId === QsRxId.QS_RX_RESET
            ? { outcome: 'none', answer: null }
            : { outcome: 'timeout', answer: null, error: `the target did not answer within ${timeoutMs} ms` },
      );
    }, timeoutMs);
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

/** What a frame whose answer will not come gets: its Trg-Ack if it had one. */
function unanswered(frame: AwaitedFrame, why: string): Verdict {
  return frame.acked
    ? { outcome: 'ack', answer: frame.acked, error: `acknowledged, but not done: ${why}` }
    : { outcome: 'timeout', answer: null, error: `no answer: ${why}` };
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
): Verdict | 'acked' | null {
  if (record.kind === 'error') return null;
  const f = record.fields;
  if (record.type === QsRecordId.QS_RX_STATUS) {
    if (f.ack === true) {
      if (!sameCommand(f.command, rxId)) return null;
      return rxId === QsRxId.QS_RX_COMMAND || rxId === QsRxId.QS_RX_TICK || rxId === QsRxId.QS_RX_EVENT
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
  if (record.type === QsRecordId.QS_TARGET_DONE && acked && sameCommand(f.command, rxId))
    return { outcome: 'done', answer: r };
  if (record.type === QsRecordId.QS_TARGET_INFO && (rxId === QsRxId.QS_RX_INFO || rxId === QsRxId.QS_RX_RESET))
    return { outcome: 'data', answer: r };
  if (record.type === QsRecordId.QS_PEEK_DATA && rxId === QsRxId.QS_RX_PEEK) return { outcome: 'data', answer: r };
  if (record.type === QsRecordId.QS_QUERY_DATA && rxId === QsRxId.QS_RX_QUERY_CURR)
    return { outcome: 'data', answer: r };
  return null;
}

function sameCommand(name: unknown, rxId: number): boolean {
  return name === QS_RX_NAMES[rxId];
}
