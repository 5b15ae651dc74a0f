import type { DecodedRecord, JsonValue } from '@tracehub/contracts';
import { QS_RECORD_SIZE_MAX, QsDecoderRecordId } from './constants.js';

/** At most this many of qspy's identical lines go into one record (its text stays small). */
const MAX_LINES = 1024;

/**
 * A run of bad frames that would otherwise each become a record of their own: garbage before
 * the first good frame (QSPY prints nothing for it) and stray flags after it (QSPY prints the
 * same `Bad checksum` line for each). A run becomes one error record with a byte and frame
 * count, so that a noisy link cannot multiply rows; its text is still every line QSPY prints
 * (none, or the one line repeated per frame, joined with `\n`, up to 1024 lines a record).
 * `raw` keeps the run's first 512 bytes; the link's bytes are all in the raw store.
 */
export class BadFrameRun {
  /** QSPY's line for each frame of the run ('' for leading garbage), or null: no run. */
  private line: string | null = null;
  private frames = 0;
  private bytes = 0;
  private raw: number[] = [];

  constructor() {
    // Written again with other values, so that V8 takes the field for a variable from the start:
    // a field written only when made is taken for a constant, and the code compiled on that (the
    // deframer's loop, which asks `open` for every frame) was thrown away at the first bad frame
    // and compiled again ("dependent field type constness changed").
    this.line = '';
    this.line = null;
  }

  get open(): boolean {
    return this.line !== null;
  }

  /** Whether a bad frame with this line (and length) continues the open run. */
  continues(line: string, length: number): boolean {
    return this.line === line && (line === '' || (length === 0 && this.frames < MAX_LINES));
  }

  /** Whether a bad frame with this line and length may start a run. */
  static starts(line: string, length: number): boolean {
    return line === '' || length === 0;
  }

  add(line: string, frame: Uint8Array): void {
    this.line = line;
    this.frames++;
    this.bytes += frame.length + 1; // and its flag
    for (let i = 0; i < frame.length && this.raw.length < QS_RECORD_SIZE_MAX; i++) this.raw.push(frame[i]);
  }

  /** The run as one record, and the run closed. */
  take(): DecodedRecord {
    const line = this.line ?? '';
    const frames = this.frames;
    const bytes = this.bytes;
    const raw = Uint8Array.from(this.raw);
    this.line = null;
    this.frames = 0;
    this.bytes = 0;
    this.raw = [];
    if (line === '') {
      return {
        kind: 'error',
        type: QsDecoderRecordId.QS_LEADING_GARBAGE,
        name: 'QS_LEADING_GARBAGE',
        targetTs: null,
        fields: { bytes, frames, message: `${bytes} bytes before the first good frame skipped (${frames} bad frames)` },
        text: '',
        raw,
      };
    }
    return {
      kind: 'error',
      type: QsDecoderRecordId.QS_BAD_CHECKSUM,
      name: 'QS_BAD_CHECKSUM',
      targetTs: null,
      fields: {
        bytes,
        frames,
        message: frames === 1 ? 'bad checksum: empty frame (a stray flag)' : `${frames} stray flags (empty frames)`,
      },
      text: frames === 1 ? line : `${`${line}\n`.repeat(frames - 1)}${line}`,
      raw,
    };
  }

  toJSON(): JsonValue {
    return this.line === null ? null : { line: this.line, frames: this.frames, bytes: this.bytes, raw: this.raw };
  }

  load(json: JsonValue | undefined): void {
    const j = json as { line: string; frames: number; bytes: number; raw: number[] } | null | undefined;
    this.line = j ? j.line : null;
    this.frames = j ? j.frames : 0;
    this.bytes = j ? j.bytes : 0;
    this.raw = j ? [...j.raw] : [];
  }
}
