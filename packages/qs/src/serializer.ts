import { QS_ESC, QS_ESC_XOR, QS_FRAME, QsRxId } from './constants.js';

/**
 * Builds one frame: seq, record id, payload, inverted-sum checksum, every byte stuffed
 * (0x7D/0x7E sent as 0x7D, b^0x20), then one flag (spec 2.1, 2.2, 10.1). The mirror of
 * `QsDeframer`; stuffing every byte is what the host does and what any receiver accepts.
 */
export function encodeFrame(seq: number, recordId: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const frame = new Uint8Array(payload.length + 3);
  frame[0] = seq & 0xff;
  frame[1] = recordId & 0xff;
  frame.set(payload, 2);
  let sum = frame[0] + frame[1];
  for (let i = 0; i < payload.length; i++) sum += payload[i];
  frame[frame.length - 1] = ~sum & 0xff;
  return escapeFrame(frame);
}

/**
 * A frame's bytes as they go on the link, from its un-escaped contents (seq, id, payload,
 * checksum: what a record's `raw` holds): 0x7D and 0x7E stuffed, then the closing flag.
 * Writing the `raw` of consecutive records this way gives a stream that qspy and this
 * decoder read as the original capture.
 */
export function escapeFrame(frame: Uint8Array): Uint8Array {
  let escapes = 0;
  for (let i = 0; i < frame.length; i++) if (frame[i] === QS_FRAME || frame[i] === QS_ESC) escapes++;
  const out = new Uint8Array(frame.length + escapes + 1);
  writeEscapedFrame(frame, out, 0);
  return out;
}

/** Number of bytes `escapeFrame(frame)` makes. */
export function escapedFrameLength(frame: Uint8Array): number {
  let n = frame.length + 1;
  for (let i = 0; i < frame.length; i++) if (frame[i] === QS_FRAME || frame[i] === QS_ESC) n++;
  return n;
}

/**
 * Writes `escapeFrame(frame)` into `out` at `at` (which must have `escapedFrameLength(frame)`
 * bytes free) and returns the offset after it: exports fill one buffer with many frames.
 */
export function writeEscapedFrame(frame: Uint8Array, out: Uint8Array, at: number): number {
  let o = at;
  for (let i = 0; i < frame.length; i++) {
    const b = frame[i];
    if (b === QS_FRAME || b === QS_ESC) {
      out[o++] = QS_ESC;
      out[o++] = b ^ QS_ESC_XOR;
    } else out[o++] = b;
  }
  out[o++] = QS_FRAME;
  return o;
}

/**
 * The bytes QSPY writes for a record's `text`: the text is Latin-1, one character per byte
 * (strings from the target keep their bytes 0x80..0xFF as U+0080..U+00FF), so stores and
 * exports that write these bytes, not the text's UTF-8, give `cmp`-equal output.
 */
export function qsTextBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** A sequence of frames with its own sequence counter: the first frame gets seq 1. */
export class QsFrameBuilder {
  /** Sequence number of the last frame built (0: none yet). */
  seq = 0;

  frame(recordId: number, payload?: Uint8Array): Uint8Array {
    this.seq = (this.seq + 1) & 0xff;
    return encodeFrame(this.seq, recordId, payload);
  }

  /** Starts again from seq 1 (after a target reset). */
  resetSequence(): void {
    this.seq = 0;
  }
}

/** Little-endian payload writer, sized by a target's configuration: the mirror of `PayloadReader`. */
export class QsPayloadWriter {
  private bytes: number[] = [];

  u8(v: number): this {
    return this.uint(v, 1);
  }

  u16(v: number): this {
    return this.uint(v, 2);
  }

  u32(v: number): this {
    return this.uint(v, 4);
  }

  /** Unsigned (or two's-complement) integer of `size` bytes, least significant byte first. */
  uint(v: number | bigint, size: number): this {
    let x = BigInt.asUintN(size * 8, BigInt(v));
    for (let i = 0; i < size; i++) {
      this.bytes.push(Number(x & 0xffn));
      x >>= 8n;
    }
    return this;
  }

  /** Zero-terminated string (Latin-1, one byte per character). */
  str(s: string): this {
    for (let i = 0; i < s.length; i++) this.bytes.push(s.charCodeAt(i) & 0xff);
    this.bytes.push(0);
    return this;
  }

  raw(b: ArrayLike<number>): this {
    for (let i = 0; i < b.length; i++) this.bytes.push(b[i] & 0xff);
    return this;
  }

  toBytes(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/** Sizes a QS-RX command is laid out with: the target's configuration (from its target info). */
export interface QsRxSizes {
  objPtrSize: number;
  funPtrSize: number;
  sigSize: number;
}

/** A 128-bit filter bitmap (16 bytes) with the given record ids or QS-IDs enabled (spec 11). */
export function filterBitmap(ids: Iterable<number>): Uint8Array {
  const bitmap = new Uint8Array(16);
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id > 127) throw new RangeError(`filter id ${id} is not in 0..127`);
    bitmap[id >> 3] |= 1 << (id & 7);
  }
  return bitmap;
}

/**
 * Host -> target commands (QS-RX, spec 10), each returned as the exact bytes to write to the
 * link. Keeps the host's own sequence counter: call `resetSequence()` when the target reports
 * a reset (a target-info record with `fields.reset`).
 */
export class QsRxEncoder {
  private readonly frames = new QsFrameBuilder();
  private readonly sizes: QsRxSizes;

  constructor(sizes: Partial<QsRxSizes> = {}) {
    this.sizes = { objPtrSize: 4, funPtrSize: 4, sigSize: 2, ...sizes };
  }

  /** Sequence number of the last command built. */
  get seq(): number {
    return this.frames.seq;
  }

  resetSequence(): void {
    this.frames.resetSequence();
  }

  /** QS_RX_INFO: the target answers with a target-info record (isReset 0). */
  info(): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_INFO);
  }

  /** QS_RX_COMMAND: calls the application's `QS_onCommand(cmdId, p1, p2, p3)`. */
  command(cmdId: number, p1 = 0, p2 = 0, p3 = 0): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_COMMAND, new QsPayloadWriter().u8(cmdId).u32(p1).u32(p2).u32(p3).toBytes());
  }

  /** QS_RX_RESET: the target resets itself. */
  reset(): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_RESET);
  }

  /** QS_RX_TICK: one clock tick at the given tick rate. */
  tick(rate = 0): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_TICK, new QsPayloadWriter().u8(rate).toBytes());
  }

  /** QS_RX_PEEK: `num` items of `size` (1, 2 or 4) bytes at `offset` in the current AP object. */
  peek(offset: number, size: 1 | 2 | 4, num: number): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_PEEK, new QsPayloadWriter().u16(offset).u8(size).u8(num).toBytes());
  }

  /** QS_RX_POKE: writes the items (each `size` bytes) at `offset` in the current AP object. */
  poke(offset: number, size: 1 | 2 | 4, items: readonly number[]): Uint8Array {
    if (items.length === 0 || items.length > 255) throw new RangeError('poke needs 1 to 255 items');
    const w = new QsPayloadWriter().u16(offset).u8(size).u8(items.length);
    for (const v of items) w.uint(v, size);
    return this.frames.frame(QsRxId.QS_RX_POKE, w.toBytes());
  }

  /** QS_RX_FILL: writes `value` into `num` items of `size` bytes from `offset`. */
  fill(offset: number, size: 1 | 2 | 4, num: number, value: number): Uint8Array {
    if (num < 1 || num > 255) throw new RangeError('fill needs 1 to 255 items');
    return this.frames.frame(
      QsRxId.QS_RX_FILL,
      new QsPayloadWriter().u16(offset).u8(size).u8(num).uint(value, size).toBytes(),
    );
  }

  testSetup(): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_TEST_SETUP);
  }

  testTeardown(): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_TEST_TEARDOWN);
  }

  /** QS_RX_TEST_PROBE: a test probe value for the function at `fun`. */
  testProbe(data: number, fun: number | bigint): Uint8Array {
    return this.frames.frame(
      QsRxId.QS_RX_TEST_PROBE,
      new QsPayloadWriter().u32(data).uint(fun, this.sizes.funPtrSize).toBytes(),
    );
  }

  /** QS_RX_GLB_FILTER: the global filter; record ids, or a 16-byte bitmap. */
  globalFilter(filter: Iterable<number> | Uint8Array): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_GLB_FILTER, filterPayload(filter));
  }

  /** QS_RX_LOC_FILTER: the local filter; QS-IDs, or a 16-byte bitmap. */
  localFilter(filter: Iterable<number> | Uint8Array): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_LOC_FILTER, filterPayload(filter));
  }

  /** QS_RX_AO_FILTER: enables (or disables) the local-filter bit of the AO at `ao`. */
  aoFilter(enable: boolean, ao: number | bigint): Uint8Array {
    return this.frames.frame(
      QsRxId.QS_RX_AO_FILTER,
      new QsPayloadWriter()
        .u8(enable ? 0 : 1)
        .uint(ao, this.sizes.objPtrSize)
        .toBytes(),
    );
  }

  /** QS_RX_CURR_OBJ: sets the current object of a kind (QsObjKind). */
  currentObject(kind: number, address: number | bigint): Uint8Array {
    return this.frames.frame(
      QsRxId.QS_RX_CURR_OBJ,
      new QsPayloadWriter().u8(kind).uint(address, this.sizes.objPtrSize).toBytes(),
    );
  }

  testContinue(): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_TEST_CONTINUE);
  }

  /** QS_RX_QUERY_CURR: asks for the current object of a kind (QS_QUERY_DATA answers). */
  queryCurrent(kind: number): Uint8Array {
    return this.frames.frame(QsRxId.QS_RX_QUERY_CURR, new QsPayloadWriter().u8(kind).toBytes());
  }

  /**
   * QS_RX_EVENT: an event with signal `sig` and parameter bytes. `prio` 0 publishes it,
   * 1..MAX_ACTIVE-1 posts it to that AO, 255 dispatches it to the current SM, 254 runs the
   * current SM's initial transition, 253 posts it to the current AO.
   */
  event(prio: number, sig: number, params: ArrayLike<number> = []): Uint8Array {
    if (params.length > 0xffff) throw new RangeError('event parameters exceed 65535 bytes');
    return this.frames.frame(
      QsRxId.QS_RX_EVENT,
      new QsPayloadWriter().u8(prio).uint(sig, this.sizes.sigSize).u16(params.length).raw(params).toBytes(),
    );
  }
}

function filterPayload(filter: Iterable<number> | Uint8Array): Uint8Array {
  const bitmap = filter instanceof Uint8Array ? filter : filterBitmap(filter);
  if (bitmap.length !== 16) throw new RangeError('a filter bitmap has 16 bytes');
  return new QsPayloadWriter().u8(16).raw(bitmap).toBytes();
}
