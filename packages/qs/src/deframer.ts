import type { JsonValue } from '@tracehub/contracts';
import { QS_ESC, QS_ESC_XOR, QS_FRAME, QS_RECORD_SIZE_MAX } from './constants.js';

/** What can be wrong with a frame (spec 3). */
export const QsFrameError = {
  /** Checksum is not 0xFF; reported by QSPY only once a good frame has been seen. */
  BAD_CHECKSUM: 1,
  /** Good checksum but fewer than 3 bytes. */
  TOO_SHORT: 2,
  /** More than 512 un-escaped bytes, the overflowing byte arrived plain. */
  TOO_LONG: 3,
  /** More than 512 un-escaped bytes, the overflowing byte arrived escaped. */
  TOO_LONG_ESCAPED: 4,
} as const;
export type QsFrameError = (typeof QsFrameError)[keyof typeof QsFrameError];

/** Receives what the deframer finds; `buf` is the deframer's own buffer, valid during the call only. */
export interface QsFrameSink {
  /**
   * A frame with a good checksum: `buf[0..len)` is seq, record id, payload, checksum (un-escaped).
   * `gapFrom` is -1, or the last good sequence number when this frame's seq does not follow it.
   */
  frame(buf: Uint8Array, len: number, gapFrom: number): void;
  /** A frame that is dropped; `buf[0..len)` holds what was collected of it (buf[1] may be stale, spec 3). */
  frameError(error: QsFrameError, buf: Uint8Array, len: number): void;
}

/**
 * Streaming QS deframer: QSPY's receiver (spec 3) byte for byte. Chunks may be cut anywhere;
 * state is one 512-byte buffer and a few integers, and nothing is allocated per byte.
 */
export class QsDeframer {
  private readonly buf = new Uint8Array(QS_RECORD_SIZE_MAX);
  private pos = 0;
  private chksum = 0;
  private esc = false;
  /** Last good sequence number (QSPY's `l_seq`). */
  lastSeq = 0;
  /** True until the first good frame: bad frames before it are not reported by QSPY. */
  justStarted = true;

  constructor(private readonly sink: QsFrameSink) {}

  /** Bytes of the frame being collected. */
  get pending(): number {
    return this.pos;
  }

  push(chunk: Uint8Array): void {
    const buf = this.buf;
    let pos = this.pos;
    let sum = this.chksum;
    let esc = this.esc;
    for (let i = 0, n = chunk.length; i < n; i++) {
      let b = chunk[i];
      if (esc) {
        esc = false;
        b ^= QS_ESC_XOR;
        if (pos < QS_RECORD_SIZE_MAX) {
          sum += b;
          buf[pos++] = b;
        } else {
          this.sink.frameError(QsFrameError.TOO_LONG_ESCAPED, buf, pos);
          pos = 0;
          sum = 0;
        }
      } else if (b === QS_ESC) {
        esc = true;
      } else if (b === QS_FRAME) {
        if ((sum & 0xff) !== 0xff) {
          this.sink.frameError(QsFrameError.BAD_CHECKSUM, buf, pos);
        } else if (pos < 3) {
          this.sink.frameError(QsFrameError.TOO_SHORT, buf, pos);
        } else {
          const seq = buf[0];
          let gapFrom = -1;
          if (!this.justStarted && seq !== ((this.lastSeq + 1) & 0xff) && buf[1] !== 0) gapFrom = this.lastSeq;
          this.justStarted = false;
          this.lastSeq = seq;
          this.sink.frame(buf, pos, gapFrom);
        }
        pos = 0;
        sum = 0;
      } else if (pos < QS_RECORD_SIZE_MAX) {
        sum += b;
        buf[pos++] = b;
      } else {
        this.sink.frameError(QsFrameError.TOO_LONG, buf, pos);
        pos = 0;
        sum = 0;
      }
    }
    this.pos = pos;
    this.chksum = sum;
    this.esc = esc;
  }

  /** Drops the frame being collected (bytes were lost before the next chunk); returns its bytes. */
  discardPartial(): Uint8Array {
    const partial = this.buf.slice(0, this.pos);
    this.pos = 0;
    this.chksum = 0;
    this.esc = false;
    return partial;
  }

  /** The bytes of the frame being collected (a copy). */
  partial(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  snapshot(): JsonValue {
    // Bytes 0 and 1 matter even when not collected yet: QSPY names bad frames from stale buf[1].
    const keep = Math.max(this.pos, 2);
    return {
      buf: Buffer.from(this.buf.buffer, this.buf.byteOffset, keep).toString('base64'),
      pos: this.pos,
      chksum: this.chksum & 0xff,
      esc: this.esc,
      lastSeq: this.lastSeq,
      justStarted: this.justStarted,
    };
  }

  restore(json: JsonValue): void {
    const j = json as { buf: string; pos: number; chksum: number; esc: boolean; lastSeq: number; justStarted: boolean };
    this.buf.fill(0);
    this.buf.set(Buffer.from(j.buf, 'base64').subarray(0, QS_RECORD_SIZE_MAX));
    this.pos = j.pos;
    this.chksum = j.chksum;
    this.esc = j.esc;
    this.lastSeq = j.lastSeq;
    this.justStarted = j.justStarted;
  }
}
