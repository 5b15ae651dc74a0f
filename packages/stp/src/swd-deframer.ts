/** SWD reverse-channel framing (spec §11): START 0xC0, END 0xC1, PREFIX 0x7D (next byte XOR 0x20). */
export const SWD_START = 0xc0;
export const SWD_END = 0xc1;
export const SWD_PREFIX = 0x7d;
export const SWD_ESCAPE_XOR = 0x20;

/** Why a frame was dropped. */
export type SwdViolation = 'start_inside_frame' | 'bad_escape' | 'unterminated' | 'lost_input';

export interface SwdSink {
  /**
   * A complete, non-empty message; the view is valid only during the call. `receivedBytes` is
   * more than its length when the frame was longer than a message can be and was truncated.
   */
  message(data: Uint8Array, receivedBytes: number): void;
  /** A frame dropped by a framing violation, with the bytes it had collected. */
  violation(reason: SwdViolation, droppedBytes: number): void;
  /** Bytes outside any frame that are not padding (0x00 / 0xFF), reported before the next frame. */
  skipped(count: number): void;
}

enum SwdState {
  IDLE = 0,
  IN_FRAME = 1,
  ESCAPED = 2,
}

/**
 * Streaming SWD deframer. Bytes between frames are padding or break-off and are skipped.
 * The transfer unit is a 4-byte word, so a sender pads with framing marks: more STARTs
 * before a frame's first byte and more ENDs after a frame are padding, not violations.
 * A START after data, or an escape of a framing byte, drops the current message; a frame
 * longer than a message can be is truncated to the limit and still delivered (`C0 C1`, an
 * empty frame, is discarded silently).
 */
export class SwdDeframer {
  private state = SwdState.IDLE;
  private buf: Uint8Array;
  private length = 0;
  /** Bytes of the current frame, counting those past the limit that truncation leaves out. */
  private received = 0;
  private junk = 0;
  readonly counters = {
    messages: 0,
    violations: 0,
    skippedBytes: 0,
    paddingBytes: 0,
    emptyFrames: 0,
    truncatedMessages: 0,
  };

  constructor(
    private readonly sink: SwdSink,
    readonly maxMessageBytes = 65512,
  ) {
    this.buf = new Uint8Array(Math.min(256, maxMessageBytes));
  }

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      switch (this.state) {
        case SwdState.IDLE:
          if (b === SWD_START) {
            this.flushJunk();
            this.state = SwdState.IN_FRAME;
            this.length = 0;
            this.received = 0;
          } else if (b === 0x00 || b === 0xff || b === SWD_END) {
            this.counters.paddingBytes++;
          } else {
            this.junk++;
          }
          break;
        case SwdState.IN_FRAME:
          if (b === SWD_END) {
            this.state = SwdState.IDLE;
            if (this.length === 0) this.counters.emptyFrames++;
            else {
              this.counters.messages++;
              if (this.received > this.length) this.counters.truncatedMessages++;
              this.sink.message(this.buf.subarray(0, this.length), this.received);
            }
          } else if (b === SWD_START) {
            // Before the first byte, another START is padding; after data it breaks the frame off.
            if (this.received === 0) this.counters.paddingBytes++;
            else this.drop('start_inside_frame');
          } else if (b === SWD_PREFIX) {
            this.state = SwdState.ESCAPED;
          } else {
            this.append(b);
          }
          break;
        case SwdState.ESCAPED:
          if (b === SWD_START || b === SWD_END || b === SWD_PREFIX) {
            this.drop('bad_escape');
            // A START still opens the next frame; anything else leaves us between frames.
            this.state = b === SWD_START ? SwdState.IN_FRAME : SwdState.IDLE;
          } else {
            this.state = SwdState.IN_FRAME;
            this.append(b ^ SWD_ESCAPE_XOR);
          }
          break;
      }
    }
  }

  /** End of input: an unterminated frame is dropped; stray bytes are reported. */
  end(reason: SwdViolation = 'unterminated'): void {
    if (this.state !== SwdState.IDLE && this.received > 0) {
      this.counters.violations++;
      this.sink.violation(reason, this.received);
    }
    this.state = SwdState.IDLE;
    this.length = 0;
    this.received = 0;
    this.flushJunk();
  }

  /** True while a frame is open (with `openLength` bytes so far). */
  get inFrame(): boolean {
    return this.state !== SwdState.IDLE;
  }

  get openLength(): number {
    return this.length;
  }

  private append(b: number): void {
    this.received++;
    if (this.length >= this.maxMessageBytes) return;
    if (this.length === this.buf.length) {
      const next = new Uint8Array(Math.min(this.buf.length * 2, this.maxMessageBytes));
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = b;
  }

  private drop(reason: SwdViolation): void {
    this.counters.violations++;
    this.sink.violation(reason, this.received);
    this.length = 0;
    this.received = 0;
  }

  private flushJunk(): void {
    if (this.junk === 0) return;
    this.counters.skippedBytes += this.junk;
    this.sink.skipped(this.junk);
    this.junk = 0;
  }

  snapshot(): Record<string, unknown> {
    let data = '';
    for (let i = 0; i < this.length; i++) data += this.buf[i].toString(16).padStart(2, '0');
    return { state: this.state, data, received: this.received, junk: this.junk, counters: { ...this.counters } };
  }

  restore(s: Record<string, unknown>): void {
    this.state = s.state as SwdState;
    const hex = s.data as string;
    this.length = hex.length / 2;
    if (this.buf.length < this.length) this.buf = new Uint8Array(this.maxMessageBytes);
    for (let i = 0; i < this.length; i++) this.buf[i] = Number.parseInt(hex.substr(i * 2, 2), 16);
    this.received = typeof s.received === 'number' ? s.received : this.length;
    this.junk = s.junk as number;
    Object.assign(this.counters, s.counters);
  }
}
