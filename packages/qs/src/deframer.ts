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

/** Receives what the deframer finds; `buf` is only valid during the call (copy what you keep). */
export interface QsFrameSink {
  /**
   * A frame with a good checksum: `buf[start .. start+len)` is seq, record id, payload,
   * checksum (un-escaped). `gapFrom` is -1, or the last good sequence number when this
   * frame's seq does not follow it.
   */
  frame(buf: Uint8Array, start: number, len: number, gapFrom: number): void;
  /** A frame that is dropped: `buf[start .. start+len)` is what was collected of it. */
  frameError(error: QsFrameError, buf: Uint8Array, start: number, len: number): void;
}

/**
 * Streaming QS deframer: QSPY's receiver (spec 3) byte for byte. Chunks may be cut anywhere;
 * state is one 512-byte buffer and a few integers, and nothing is allocated per byte.
 *
 * A frame that lies wholly inside a chunk with no escape in it (the common case) is summed in
 * place and handed over without being copied; everything else goes byte by byte through the
 * buffer, exactly as QSPY does.
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
  /** The length (-1: none) and sum of the frame `slow` collected in `buf` and ended, for `push` to hand over. */
  private endedLen = -1;
  private endedSum = 0;

  constructor(private sink: QsFrameSink) {}

  /** Frames go to `sink` from now on (a decoder's other way of decoding them). */
  sendFramesTo(sink: QsFrameSink): void {
    this.sink = sink;
  }

  /** True when `buf` is this deframer's own buffer (reused for the next frame), not a pushed chunk. */
  ownsBuffer(buf: Uint8Array): boolean {
    return buf === this.buf;
  }

  /** What QSPY's buffer holds at index 1 (the record id of the last frame that reached it). */
  get staleRecordId(): number {
    return this.buf[1];
  }

  /** Bytes of the frame being collected (an escape byte waiting for its partner counts as one). */
  get pending(): number {
    return this.pos + (this.esc ? 1 : 0);
  }

  push(bytes: Uint8Array): void {
    // A plain Uint8Array, as the buffer is: frames from both reach the one hand-over below, and
    // a Buffer there too made every read of a frame (the decoder's readers too) polymorphic
    // (deframing alone, Buffer chunks: 45 -> 47-90 ms for the bench's dpp_mix).
    const chunk =
      Object.getPrototypeOf(bytes) === Uint8Array.prototype
        ? bytes
        : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = chunk.length;
    const words = new DataView(chunk.buffer, chunk.byteOffset, n);
    let i = 0;
    while (i < n) {
      // The frame that ends next, found in place or collected byte by byte into `buf`: either
      // way it is handed over from this one call below. Handed over from `slow` too, the whole
      // record path was inlined there as well, and TurboFan compiled it twice (--trace-opt,
      // `tracehub decode` of the bench's dpp_steady, where 1.4% of the frames have an escape:
      // `slow` took 10-15 ms to compile, 2.4-2.6 ms now).
      let frame = chunk;
      let start = i;
      let len = 0;
      let sum = 0;
      let inPlace = false;
      if (this.pos === 0 && !this.esc) {
        // Fast path: sum the frame in place while looking for its flag; any escape (or a frame
        // that is too short, too long or cut by the chunk end) goes the byte-by-byte way instead.
        const limit = i + QS_RECORD_SIZE_MAX < n ? i + QS_RECORD_SIZE_MAX + 1 : n;
        let k = i;
        // Four bytes at a time while none of them is a flag or an escape: a byte of w ^ 0x7E7E7E7E
        // is zero where w holds a flag, and (x - 0x01010101) & ~x & 0x80808080 finds zero bytes.
        // The bytes are summed in two 16-bit lanes, kept modulo 256 (all the checksum needs).
        let lanes = 0;
        while (k + 4 <= limit) {
          const w = words.getInt32(k, true);
          const f = w ^ 0x7e7e7e7e;
          const e = w ^ 0x7d7d7d7d;
          if ((((f - 0x01010101) & ~f) | ((e - 0x01010101) & ~e)) & 0x80808080) break;
          lanes = (lanes + (w & 0xff00ff) + ((w >>> 8) & 0xff00ff)) & 0xff00ff;
          k += 4;
        }
        let plainSum = (lanes & 0xff) + (lanes >>> 16);
        let b = 0;
        while (k < limit) {
          b = chunk[k];
          if (b === QS_FRAME || b === QS_ESC) break;
          plainSum += b;
          k++;
        }
        const plainLen = k - i;
        if (k < limit && b === QS_FRAME && plainLen >= 3) {
          // QSPY's buffer would now hold this frame: keep its first bytes for stale reads (spec 3).
          this.buf[0] = chunk[i];
          this.buf[1] = chunk[i + 1];
          len = plainLen;
          sum = plainSum;
          inPlace = true;
          i = k + 1;
        } else if (k < limit && b === QS_ESC) {
          // The plain bytes before the escape (summed already) go into the buffer as they are;
          // the rest of the frame goes byte by byte.
          const buf = this.buf;
          for (let j = 0; j < plainLen; j++) buf[j] = chunk[i + j];
          this.pos = plainLen;
          this.chksum = plainSum;
          i = k;
        }
      }
      if (!inPlace) {
        i = this.slow(chunk, i, n);
        if (this.endedLen < 0) continue;
        frame = this.buf;
        start = 0;
        len = this.endedLen;
        sum = this.endedSum;
        this.endedLen = -1;
      }
      this.endFrame(frame, start, len, sum);
    }
  }

  /**
   * QSPY's per-byte receiver from `chunk[from]` up to and including the next flag, or to the
   * chunk's end `n`; returns where it stopped. A frame ended by the flag is left in `buf`, its
   * length in `endedLen` and its sum in `endedSum`, for `push` to hand over.
   */
  private slow(chunk: Uint8Array, from: number, n: number): number {
    const buf = this.buf;
    let pos = this.pos;
    let sum = this.chksum;
    let esc = this.esc;
    let i = from;
    while (i < n) {
      let b = chunk[i++];
      if (esc) {
        esc = false;
        b ^= QS_ESC_XOR;
      } else if (b === QS_ESC) {
        esc = true;
        continue;
      } else if (b === QS_FRAME) {
        this.pos = 0;
        this.chksum = 0;
        this.esc = false;
        this.endedLen = pos;
        this.endedSum = sum;
        return i;
      }
      if (pos < QS_RECORD_SIZE_MAX) {
        sum += b;
        buf[pos++] = b;
      } else {
        // QSPY names an overflow by whether the byte that overflowed was escaped: then it
        // differs from the byte read. (Found here, not noted for every byte: that cost 0.4%.)
        const escaped = b !== chunk[i - 1];
        this.sink.frameError(escaped ? QsFrameError.TOO_LONG_ESCAPED : QsFrameError.TOO_LONG, buf, 0, pos);
        pos = 0;
        sum = 0;
      }
    }
    this.pos = pos;
    this.chksum = sum;
    this.esc = esc;
    return i;
  }

  /** A flag arrived: the frame is `buf[start .. start+len)` and its bytes add up to `sum`. */
  private endFrame(buf: Uint8Array, start: number, len: number, sum: number): void {
    if ((sum & 0xff) !== 0xff) {
      this.sink.frameError(QsFrameError.BAD_CHECKSUM, buf, start, len);
    } else if (len < 3) {
      this.sink.frameError(QsFrameError.TOO_SHORT, buf, start, len);
    } else {
      const seq = buf[start];
      let gapFrom = -1;
      if (!this.justStarted && seq !== ((this.lastSeq + 1) & 0xff) && buf[start + 1] !== 0) gapFrom = this.lastSeq;
      this.justStarted = false;
      this.lastSeq = seq;
      this.sink.frame(buf, start, len, gapFrom);
    }
  }

  /** Drops the frame being collected (bytes were lost before the next chunk); returns its bytes. */
  discardPartial(): Uint8Array {
    const partial = this.partial();
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
