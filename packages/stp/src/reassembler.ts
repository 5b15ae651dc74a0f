import {
  ClosedBy,
  ExceptionCode,
  MarkerCode,
  OST_MAX_DATA,
  PHONET_EXCEPTION_MAX_DATA,
  PHONET_MAX_DATA,
} from './constants.js';
import { CONTROL_CHANNEL, type ControlMessage, detectControlMessage } from './control.js';
import { bytesToHex, hexToBytes } from './hex.js';

export type OutputProtocol = 'ost' | 'phonet';

/**
 * What the reassembler produces, in output order. Byte views are valid only during the call.
 * `at` is the stream position (nibble index) at which the event happens.
 */
export interface ReassemblySink {
  /**
   * A regular output message (OST 0x84 / PhoNet 0x94): the closed buffer, with how it closed
   * (`closedBy`, `tsKind`, `sent`, `control`) set on it.
   */
  message(b: MessageBuffer, at: number): void;
  /** A PhoNet exception message (0x95). */
  exception(code: ExceptionCode, master: number, channel: number, data: Uint8Array, at: number): void;
  marker(code: MarkerCode, params: Uint8Array, at: number): void;
  /** OST: an open message thrown away (illegal packet, overflow, lost input). */
  discardedMessage(master: number, channel: number, length: number, at: number): void;
  /** Nibbles skipped while unsynchronised or discarding. */
  discardedNibbles(count: number, at: number): void;
  /** A timestamp field was decoded (the running device timestamp). */
  deviceTimestamp(hi: number, lo: number, fixed: boolean): void;
  /** A VERSION packet: the timestamp format of what follows (spec §4). */
  timestampFormat(version: number): void;
  /** A FREQ packet: device timestamp clock in Hz. */
  frequency(hz: number): void;
}

export interface ReassemblerLimits {
  /** Largest message the trace box buffers; beyond it, OVERFLOW (spec §8). */
  maxMessageBytes: number;
  /** All open buffers together. */
  maxBufferedBytes: number;
  maxOpenBuffers: number;
}

export const DEFAULT_LIMITS: ReassemblerLimits = Object.freeze({
  maxMessageBytes: 1 << 20,
  maxBufferedBytes: 16 << 20,
  maxOpenBuffers: 4096,
});

/** Control messages are short; longer channel-1 messages are not checked. */
const CONTROL_CANDIDATE_MAX = 4096;
/** Distinct packet-size runs a control message can have (one size, then a decreasing tail). */
const CONTROL_MAX_RUNS = 8;
/** A closed buffer keeps its array for the pair's next message unless it grew past this. */
const KEEP_CAPACITY = 4096;

/** One open message of a (master, channel) pair. */
export class MessageBuffer {
  master = 0;
  channel = 0;
  data: Uint8Array;
  /** Bytes received (may exceed what is stored: OST keeps only what it can send). */
  length = 0;
  /** Channel 0x01 only: packet sizes as runs [size, count, size, count...], or null. */
  runs: number[] | null = null;
  isOpen = false;
  /** When it was opened: the order in which GERR, illegal packets and pauses close buffers. */
  openSeq = 0;
  // How the message closed, for the sink's `message` call.
  closedBy = ClosedBy.NONE;
  /**
   * 0: the closing packet carried no timestamp; 1: a 64-bit device timestamp; 2: the fixed 8-bit
   * form. The value is the reassembler's `closeTsHi` / `closeTsLo`.
   */
  tsKind = 0;
  /** Bytes sent: the message is `data[0, sent)`; `length` is more when OST truncated it. */
  sent = 0;
  control: ControlMessage | null = null;
  /**
   * The start of the pair's message event line (`writeMessageEventJson`), which only master,
   * channel and `closedBy` decide: built once for the pair, not for every message.
   */
  eventHead: Uint8Array | null = null;
  eventHeadClosedBy = ClosedBy.NONE;

  constructor(capacity: number) {
    this.data = new Uint8Array(capacity);
  }
}

/**
 * Rebuilds messages per (master, channel) from data packets (spec §6–§8): current master and
 * channel, endianness per master, the closing rules of STP v1 and v2, the error packets, and
 * what each output protocol makes of data it cannot deliver normally.
 */
export class StpReassembler {
  /** Current master; -1: none (STP v1 before the first MASTER). */
  master: number;
  channel = 0;
  /** Position of the current event (set by the parser). */
  at = 0;
  closeTsHi = 0;
  closeTsLo = 0;
  /**
   * Buffers by (master << 16 | channel). A closed buffer stays in the map, ready for the
   * pair's next message, so that steady traffic costs no map update per message.
   */
  private readonly buffers = new Map<number, MessageBuffer>();
  /** Buffer of the current master/channel (open or not), or null. */
  private current: MessageBuffer | null = null;
  openCount = 0;
  private openSeq = 0;
  private bufferedBytes = 0;
  private readonly storeLimit: number;
  readonly counters = { messages: 0, exceptions: 0, markers: 0, discardedMessages: 0, dataWithoutMaster: 0 };

  constructor(
    readonly stpVersion: 1 | 2,
    readonly protocol: OutputProtocol,
    /** 1 for each little-endian master (index = master id; masters past its end are big-endian). */
    readonly littleEndian: Uint8Array,
    readonly sink: ReassemblySink,
    readonly limits: ReassemblerLimits = DEFAULT_LIMITS,
  ) {
    this.master = stpVersion === 1 ? -1 : 0;
    // OST sends at most OST_MAX_DATA bytes of a message, so it need not keep more.
    this.storeLimit = protocol === 'ost' ? Math.min(OST_MAX_DATA, limits.maxMessageBytes) : limits.maxMessageBytes;
  }

  // --- addressing -------------------------------------------------------------------------

  /**
   * MASTER (v1), M8 and M16: the current master, with `keep` the bits of the last one an 8-bit
   * form keeps (v2 M8); the channel is 0 again.
   */
  setMaster(value: number, keep: number): void {
    this.master = (this.master & keep) | value;
    this.channel = 0;
    this.select();
  }

  /** C8 (v1, v2) and C16, `keep` as for `setMaster`. */
  setChannel(value: number, keep: number): void {
    // Before any MASTER (v1) the channel is meaningless: the next MASTER resets it.
    if (this.master < 0) return;
    this.channel = (this.channel & keep) | value;
    this.select();
  }

  /** After a resynchronising pause: normal processing with no current master. */
  v1Resync(): void {
    this.master = -1;
    this.channel = 0;
    this.current = null;
  }

  /** VERSION resets the current master and channel to 0; open buffers stay open. */
  versionPacket(): void {
    this.master = 0;
    this.channel = 0;
    this.select();
  }

  private select(): void {
    this.current = this.master < 0 ? null : (this.buffers.get(this.master * 0x10000 + this.channel) ?? null);
  }

  // --- data -------------------------------------------------------------------------------

  /**
   * Appends one data packet's bytes to the current buffer, and closes it when the packet
   * does. Returns false on a buffer overflow (the caller then resynchronises).
   */
  data(bytes: number, hi: number, lo: number, closes: ClosedBy, hasTs: boolean, tsFixed: boolean): boolean {
    if (this.master < 0) {
      this.counters.dataWithoutMaster++;
      return true;
    }
    let b = this.current;
    if (b === null || !b.isOpen) {
      if (this.openCount >= this.limits.maxOpenBuffers) return this.overflow();
      b = this.openCurrent();
    }
    const length = b.length;
    if (length + bytes > this.limits.maxMessageBytes || this.bufferedBytes + bytes > this.limits.maxBufferedBytes) {
      return this.overflow();
    }
    const little = this.master < this.littleEndian.length && this.littleEndian[this.master] === 1;
    if (length + bytes <= this.storeLimit) {
      if (length + bytes > b.data.length) this.grow(b, length + bytes);
      const d = b.data;
      if (bytes === 8) {
        if (little) {
          put32le(d, length, lo);
          put32le(d, length + 4, hi);
        } else {
          put32be(d, length, hi);
          put32be(d, length + 4, lo);
        }
      } else if (bytes === 4) {
        if (little) put32le(d, length, lo);
        else put32be(d, length, lo);
      } else if (bytes === 2) {
        d[length + (little ? 1 : 0)] = lo >>> 8;
        d[length + (little ? 0 : 1)] = lo;
      } else {
        d[length] = lo;
      }
    } else if (length < this.storeLimit) {
      // The store limit falls inside this packet: keep the bytes that fit, in output order.
      const tmp = new Uint8Array(8);
      for (let i = 0; i < bytes; i++) {
        const shift = (bytes - 1 - i) * 8;
        tmp[i] = shift >= 32 ? hi >>> (shift - 32) : lo >>> shift;
      }
      if (little) tmp.subarray(0, bytes).reverse();
      const keep = this.storeLimit - length;
      if (this.storeLimit > b.data.length) this.grow(b, this.storeLimit);
      b.data.set(tmp.subarray(0, keep), length);
    }
    b.length = length + bytes;
    this.bufferedBytes += bytes;
    const runs = b.runs;
    if (runs !== null) {
      const last = runs.length - 2;
      if (last >= 0 && runs[last] === bytes) runs[last + 1]++;
      else if (runs.length >= CONTROL_MAX_RUNS * 2 || b.length > CONTROL_CANDIDATE_MAX) b.runs = null;
      else runs.push(bytes, 1);
    }
    if (closes !== ClosedBy.NONE) {
      this.close(b);
      this.deliver(b, closes, hasTs ? (tsFixed ? 2 : 1) : 0);
      this.release(b);
    }
    return true;
  }

  /** FLAG / FLAG_TS: close the current buffer, or send an empty message when none is open. */
  flag(closes: ClosedBy, hasTs: boolean, tsFixed: boolean): void {
    const tsKind = hasTs ? (tsFixed ? 2 : 1) : 0;
    const b = this.current;
    if (b === null || !b.isOpen) {
      const empty = this.openCurrent();
      this.close(empty);
      this.deliver(empty, closes, tsKind);
      this.release(empty);
      return;
    }
    this.close(b);
    this.deliver(b, closes, tsKind);
    this.release(b);
  }

  /** OVRF (v1), MERR and GERR, given as how they close buffers: spec §8. */
  errorPacket(closedBy: ClosedBy, code: number): void {
    const master = Math.max(0, this.master);
    const channel = this.channel;
    if (closedBy === ClosedBy.GERR) {
      for (const b of this.openBuffers()) this.closeAbnormally(b, closedBy);
    } else if (this.current?.isOpen) {
      this.closeAbnormally(this.current!, closedBy);
    }
    if (this.protocol === 'phonet') {
      ERROR_BYTE[0] = code;
      this.counters.exceptions++;
      this.sink.exception(ExceptionCode.OVRF, master, channel, ERROR_BYTE, this.at);
    }
    // MIPI behaviour (OpenCSD, TI): MERR resets the channel, GERR the master and channel.
    if (closedBy === ClosedBy.MERR) this.channel = 0;
    else if (closedBy === ClosedBy.GERR) {
      this.master = 0;
      this.channel = 0;
    }
    this.select();
  }

  /** An illegal packet: every open buffer is unfinished; marker 0x27 with the failing nibbles. */
  illegal(params: Uint8Array): void {
    this.dropAll();
    this.counters.markers++;
    this.sink.marker(MarkerCode.RESERVED_STP_PACKET, params, this.at);
  }

  /** Input was lost: open buffers are unfinished, and marker 0x06 DATA_CORRUPTED says so. */
  inputLost(): void {
    this.dropAll();
    this.counters.markers++;
    this.sink.marker(MarkerCode.DATA_CORRUPTED, NO_BYTES, this.at);
  }

  /** v1: a pause above the max pause with open buffers flushes them, then marker 0x23. */
  longPause(): void {
    if (this.openCount === 0) return;
    for (const b of this.openBuffers()) {
      this.close(b);
      if (this.protocol === 'ost') this.deliver(b, ClosedBy.PAUSE, 0);
      else this.exceptions(b, ExceptionCode.UNFINISHED_MESSAGE, ExceptionCode.LONG_UNFINISHED_MESSAGE);
      this.release(b);
    }
    this.counters.markers++;
    this.sink.marker(MarkerCode.PAUSE_IN_STP_STREAM_LONG, NO_BYTES, this.at);
  }

  /** Every open buffer is unfinished (illegal data, overflow, lost input), in creation order. */
  dropAll(): void {
    for (const b of this.openBuffers()) {
      this.close(b);
      if (this.protocol === 'ost') {
        this.counters.discardedMessages++;
        this.sink.discardedMessage(b.master, b.channel, b.length, this.at);
      } else {
        this.exceptions(b, ExceptionCode.UNFINISHED_MESSAGE, ExceptionCode.LONG_UNFINISHED_MESSAGE);
      }
      this.release(b);
    }
  }

  /** Open buffers, in creation order (what is left when a stream ends). */
  openBuffers(): MessageBuffer[] {
    const open: MessageBuffer[] = [];
    if (this.openCount === 0) return open;
    for (const b of this.buffers.values()) if (b.isOpen) open.push(b);
    return open.sort((a, b) => a.openSeq - b.openSeq);
  }

  /** Forgets every buffer (the end of a stream). */
  clear(): void {
    this.buffers.clear();
    this.current = null;
    this.openCount = 0;
    this.bufferedBytes = 0;
  }

  private overflow(): boolean {
    this.dropAll();
    this.counters.markers++;
    this.sink.marker(MarkerCode.OVERFLOW, NO_BYTES, this.at);
    return false;
  }

  private closeAbnormally(b: MessageBuffer, closedBy: ClosedBy): void {
    this.close(b);
    if (this.protocol === 'ost') this.deliver(b, closedBy, 0);
    else this.exceptions(b, ExceptionCode.OVRF_PACKET, ExceptionCode.LONG_OVRF_PACKET);
    this.release(b);
  }

  /** A message that closed normally (or, for OST, by an error packet or a long pause). */
  private deliver(b: MessageBuffer, closedBy: ClosedBy, tsKind: number): void {
    const length = b.length;
    if (this.protocol === 'phonet' && length > PHONET_MAX_DATA) {
      this.exceptions(b, ExceptionCode.LONG_MESSAGE_LAST, ExceptionCode.LONG_MESSAGE_LAST);
      return;
    }
    const sent = Math.min(length, OST_MAX_DATA);
    const control =
      b.runs !== null
        ? detectControlMessage(
            b.data,
            length,
            b.runs,
            b.master < this.littleEndian.length && this.littleEndian[b.master] === 1,
          )
        : null;
    this.counters.messages++;
    // No subarray here: views are costly on the hot path, so the sink gets the array and a length.
    b.closedBy = closedBy;
    b.tsKind = tsKind;
    b.sent = sent;
    b.control = control;
    this.sink.message(b, this.at);
  }

  /** PhoNet: one exception, or a LONG_MESSAGE chain when the data does not fit in one. */
  private exceptions(b: MessageBuffer, single: ExceptionCode, last: ExceptionCode): void {
    const length = b.length;
    if (length <= PHONET_EXCEPTION_MAX_DATA) {
      this.counters.exceptions++;
      this.sink.exception(single, b.master, b.channel, b.data.subarray(0, length), this.at);
      return;
    }
    for (let offset = 0; offset < length; offset += PHONET_EXCEPTION_MAX_DATA) {
      const end = Math.min(length, offset + PHONET_EXCEPTION_MAX_DATA);
      const code =
        offset === 0 ? ExceptionCode.LONG_MESSAGE_FIRST : end === length ? last : ExceptionCode.LONG_MESSAGE_MIDDLE;
      this.counters.exceptions++;
      this.sink.exception(code, b.master, b.channel, b.data.subarray(offset, end), this.at);
    }
  }

  /** Opens the buffer of the current master/channel (reusing the pair's closed one). */
  private openCurrent(): MessageBuffer {
    const key = this.master * 0x10000 + this.channel;
    let b = this.current;
    if (b === null) {
      if (this.buffers.size >= 2 * this.limits.maxOpenBuffers) this.forgetClosed();
      b = new MessageBuffer(64);
      b.master = this.master;
      b.channel = this.channel;
      this.buffers.set(key, b);
      this.current = b;
    }
    b.length = 0;
    // A new array, not the last one emptied: `length = 0` costs more than the allocation.
    b.runs = this.channel === CONTROL_CHANNEL ? [] : null;
    b.isOpen = true;
    b.openSeq = this.openSeq++;
    this.openCount++;
    return b;
  }

  /** Keeps the map of known pairs bounded: closed buffers are only a cache. */
  private forgetClosed(): void {
    for (const [key, b] of this.buffers) if (!b.isOpen) this.buffers.delete(key);
  }

  private close(b: MessageBuffer): void {
    b.isOpen = false;
    this.openCount--;
    this.bufferedBytes -= b.length;
  }

  private release(b: MessageBuffer): void {
    if (b.data.length > KEEP_CAPACITY) b.data = new Uint8Array(64);
  }

  private grow(b: MessageBuffer, needed: number): void {
    let capacity = b.data.length * 2;
    while (capacity < needed) capacity *= 2;
    const data = new Uint8Array(Math.min(capacity, Math.max(needed, this.storeLimit)));
    data.set(b.data.subarray(0, Math.min(b.length, b.data.length)));
    b.data = data;
  }

  snapshot(): Record<string, unknown> {
    return {
      master: this.master,
      channel: this.channel,
      bufferedBytes: this.bufferedBytes,
      openSeq: this.openSeq,
      counters: { ...this.counters },
      open: this.openBuffers().map((b) => ({
        master: b.master,
        channel: b.channel,
        length: b.length,
        openSeq: b.openSeq,
        data: bytesToHex(b.data, 0, Math.min(b.length, this.storeLimit)),
        runs: b.runs,
      })),
    };
  }

  restore(s: Record<string, unknown>): void {
    this.master = s.master as number;
    this.channel = s.channel as number;
    this.bufferedBytes = s.bufferedBytes as number;
    this.openSeq = s.openSeq as number;
    Object.assign(this.counters, s.counters);
    this.buffers.clear();
    this.openCount = 0;
    for (const o of s.open as {
      master: number;
      channel: number;
      length: number;
      openSeq: number;
      data: string;
      runs: number[] | null;
    }[]) {
      const bytes = hexToBytes(o.data);
      const b = new MessageBuffer(Math.max(64, bytes.length));
      b.data.set(bytes);
      b.master = o.master;
      b.channel = o.channel;
      b.length = o.length;
      b.openSeq = o.openSeq;
      b.isOpen = true;
      b.runs = o.runs === null ? null : [...o.runs];
      this.buffers.set(b.master * 0x10000 + b.channel, b);
      this.openCount++;
    }
    this.select();
  }
}

/** A 32-bit word into a message buffer, most significant byte first (a big-endian master). */
function put32be(d: Uint8Array, at: number, v: number): void {
  d[at] = v >>> 24;
  d[at + 1] = v >>> 16;
  d[at + 2] = v >>> 8;
  d[at + 3] = v;
}

/** A 32-bit word, least significant byte first (a little-endian master: the word reversed). */
function put32le(d: Uint8Array, at: number, v: number): void {
  d[at] = v;
  d[at + 1] = v >>> 8;
  d[at + 2] = v >>> 16;
  d[at + 3] = v >>> 24;
}

const NO_BYTES = new Uint8Array(0);
/** The one-byte payload of a 0x08 exception (a view valid only during the sink call). */
const ERROR_BYTE = new Uint8Array(1);
