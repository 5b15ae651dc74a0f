import {
  Action,
  PKT_ACTION,
  PKT_BYTES,
  PKT_CLOSES,
  PKT_KEEP,
  PKT_PAYLOAD,
  PKT_TS,
  Pkt,
  V1_OPCODES,
  V2_OPCODES_1,
  V2_OPCODES_2,
  V2_OPCODES_3,
} from './packets.js';
import type { StpReassembler } from './reassembler.js';

/** Where the parser is inside the nibble stream. */
export enum ParserState {
  OPCODE1 = 0,
  OPCODE2,
  OPCODE3,
  PAYLOAD,
  USER_LENGTH,
  TS_LENGTH,
  TS_VALUE,
  ASYNC_RUN,
  /** STP v2: looking for ASYNC (>= 21 F then 0) or 22 NULLs before VERSION. */
  UNSYNCED,
  /** STP v1: discarding until a pause >= the resynchronisation pause. */
  V1_DISCARD,
  // TIME / TIME_TS (spec §3.2): clock index, version, then a field coded as that version's timestamp.
  TIME_CLOCK,
  TIME_VERSION,
}

/** How the v2 stream found its way back to a VERSION packet. */
enum SyncVia {
  NONE = 0,
  ASYNC = 1,
  NULLS = 2,
}

/** Longest packet the parser records nibble by nibble (USER_TS: 3 + 1 + 16 + 17). */
const MAX_RECORDED_NIBBLES = 64;
const ASYNC_F_COUNT = 21;
const NULL_SYNC_COUNT = 22;

/** Called once per packet (and pseudo-packet) with the parser, whose `pkt*` fields describe it. */
export type PacketObserver = (parser: StpPacketParser) => void;

export interface StpPacketParserOptions {
  version: 1 | 2;
  /** v1: `synced` (default) or `hot_plug` (discard until the first resync pause); v2: `unsynchronised` (default) or `synced` (VERSION 3 assumed). */
  start?: 'synced' | 'hot_plug' | 'unsynchronised';
  resyncPauseMs?: number;
  maxPauseMs?: number;
}

/**
 * STP v1 / v2 nibble-stream parser (spec §1–§5). It takes bytes cut anywhere, splits them
 * into nibbles (low nibble first), recognises packets with a small state machine, keeps the
 * running timestamp and the synchronisation rules, and hands every complete packet to the
 * reassembler. It allocates nothing per nibble: the current packet lives in integer fields
 * and one fixed array of nibbles.
 */
export class StpPacketParser {
  readonly version: 1 | 2;
  readonly resyncPauseMs: number;
  readonly maxPauseMs: number;
  observer: PacketObserver | null = null;

  state: ParserState;
  /** Stream position (nibble index) of the next nibble. */
  pos = 0;
  /** Complete packets parsed. */
  packets = 0;

  // The packet being parsed.
  pktKind: Pkt = Pkt.NULL;
  pktStart = 0;
  pktLen = 0;
  readonly pktNibbles = new Uint8Array(MAX_RECORDED_NIBBLES);
  payloadStart = 0;
  payloadLen = 0;
  tsStart = 0;
  tsLen = 0;
  /** The timestamp field is the fixed 2-nibble form (STP v1, or v2 VERSION 1). */
  tsFixed = false;
  private remaining = 0;
  private tsRemaining = 0;
  private tsValueNibbles = 0;

  /** The timestamp states are reading the time field of a TIME packet, not a timestamp. */
  private inTimeField = false;

  /** Running timestamp, 64 bits as two unsigned 32-bit halves. */
  tsHi = 0;
  tsLo = 0;
  /** Payload of the last VERSION packet (timestamp format). */
  tsVersion = 3;

  // Synchronisation (v2).
  synced = false;
  private expectVersion = false;
  private syncVia = SyncVia.NONE;
  private asyncCount = 0;
  private fRun = 0;
  private fStart = 0;
  private zeroRun = 0;
  private zeroStart = 0;
  /** Where the current stretch of unusable input began (v2 unsynchronised, v1 discarding). */
  discardStart = 0;
  private syncStart = 0;

  constructor(
    readonly asm: StpReassembler,
    options: StpPacketParserOptions,
  ) {
    this.version = options.version;
    this.resyncPauseMs = options.resyncPauseMs ?? 1;
    this.maxPauseMs = options.maxPauseMs ?? 100;
    if (this.version === 1) {
      this.state = options.start === 'hot_plug' ? ParserState.V1_DISCARD : ParserState.OPCODE1;
    } else if (options.start === 'synced') {
      this.state = ParserState.OPCODE1;
      this.synced = true;
    } else {
      this.state = ParserState.UNSYNCED;
    }
  }

  /**
   * Feeds bytes; nibble 2k is bits [3:0] of byte k, nibble 2k+1 bits [7:4]. A packet that lies
   * whole in the bytes, when the parser stands between packets of a synchronised stream, is read
   * in one step (`wholePackets`); everything else (packets cut by the chunk's end, synchronisation,
   * illegal input) goes nibble by nibble through the state machine.
   */
  push(bytes: Uint8Array, start = 0, end = bytes.length): void {
    const last = end * 2;
    // The stream position of the chunk's nibble k is `origin + k`.
    const origin = this.pos - start * 2;
    let k = start * 2;
    while (k < last) {
      if (this.state === ParserState.OPCODE1) {
        k = this.wholePackets(bytes, k, last, origin);
        if (k === last) break;
      }
      this.nibble(nibbleAt(bytes, k));
      k++;
    }
  }

  /**
   * Reads packets that lie whole in `bytes` (before nibble `last`), from nibble `k`, while the
   * parser stands between packets; returns where it stopped: the end of the chunk, or a packet
   * for the state machine (one cut by the chunk's end, USER and TIME, something other than
   * VERSION where VERSION must come, illegal values, an ASYNC run of the wrong length). Nothing
   * of a packet it stops at has been read or changed.
   */
  private wholePackets(bytes: Uint8Array, k: number, last: number, origin: number): number {
    const v2 = this.version === 2;
    while (k < last && this.state === ParserState.OPCODE1) {
      const n1 = nibbleAt(bytes, k);
      let kind: number;
      let opcodeLen = 1;
      if (!v2) {
        kind = V1_OPCODES[n1];
        if (kind < 0) break;
      } else if (n1 !== 15) {
        if (this.expectVersion) break;
        kind = V2_OPCODES_1[n1];
      } else {
        if (k + 2 >= last) break;
        const n2 = nibbleAt(bytes, k + 1);
        if (n2 === 15) {
          const next = this.wholeAsync(bytes, k, last, origin);
          if (next === k) break;
          k = next;
          continue;
        }
        if (n2 !== 0) {
          if (this.expectVersion) break;
          kind = V2_OPCODES_2[n2];
          opcodeLen = 2;
        } else {
          kind = V2_OPCODES_3[nibbleAt(bytes, k + 2)];
          if (kind < 0 || (this.expectVersion && kind !== Pkt.VERSION)) break;
          opcodeLen = 3;
        }
      }
      const payload = PKT_PAYLOAD[kind];
      const payloadAt = k + opcodeLen;
      let end = payloadAt + payload;
      if (payload < 0 || end > last) break;
      const hi = payload > 8 ? nibblesValue(bytes, payloadAt, payload - 8) : 0;
      const lo = payload > 8 ? nibblesValue(bytes, end - 8, 8) : nibblesValue(bytes, payloadAt, payload);
      // VERSION 0 and 5..F are illegal for Fido (spec §4).
      if (kind === Pkt.VERSION && (lo === 0 || lo > 4)) break;
      // The timestamp field's value nibbles, after its length nibble in the variable form.
      let tsNibbles = 0;
      const timestamped = PKT_TS[kind] === 1;
      const tsFixed = timestamped && (!v2 || this.tsVersion === 1);
      if (tsFixed) {
        tsNibbles = 2;
      } else if (timestamped) {
        if (end >= last) break;
        const length = nibbleAt(bytes, end);
        if (length === 15) break;
        tsNibbles = length <= 12 ? length : length === 13 ? 14 : 16;
        end++;
      }
      const next = end + tsNibbles;
      if (next > last) break;
      // `act` and `timestampDone` see the packet's last nibble as the current position.
      this.pos = origin + next - 1;
      if (!timestamped && this.observer === null) {
        this.packets++;
        this.act(kind, hi, lo);
      } else {
        this.pktKind = kind;
        this.pktStart = origin + k;
        this.pktLen = next - k;
        this.payloadStart = opcodeLen;
        this.payloadLen = payload;
        this.tsLen = 0;
        if (this.observer !== null) this.recordWhole(bytes, k);
        if (timestamped) {
          this.tsStart = payloadAt + payload - k;
          this.tsFixed = tsFixed;
          this.tsValueNibbles = tsNibbles;
          this.timestampDone(
            tsNibbles > 8 ? nibblesValue(bytes, end, tsNibbles - 8) : 0,
            tsNibbles > 8 ? nibblesValue(bytes, next - 8, 8) : nibblesValue(bytes, end, tsNibbles),
          );
        }
        this.complete(hi, lo);
      }
      this.pos = origin + next;
      k = next;
    }
    return k;
  }

  /**
   * An ASYNC (21 F then 0; longer runs while the stream is not synchronised or VERSION is
   * expected) whole in the chunk; anything else is left to `nibble`.
   */
  private wholeAsync(bytes: Uint8Array, k: number, last: number, origin: number): number {
    let j = k + 2;
    if (j & 1 && j < last && nibbleAt(bytes, j) === 15) j++;
    while (j + 1 < last && bytes[j >> 1] === 0xff) j += 2;
    while (j < last && nibbleAt(bytes, j) === 15) j++;
    const run = j - k;
    if (j === last || nibbleAt(bytes, j) !== 0 || run < ASYNC_F_COUNT) return k;
    if (run > ASYNC_F_COUNT && this.synced && !this.expectVersion) return k;
    this.pos = origin + j;
    this.pseudoPacket(Pkt.ASYNC, origin + k, run + 1);
    this.expectVersion = true;
    this.syncVia = SyncVia.ASYNC;
    this.pos++;
    return j + 1;
  }

  /** The nibbles of a packet read whole, for the observer (as `record` keeps them). */
  private recordWhole(bytes: Uint8Array, k: number): void {
    const count = Math.min(this.pktLen, MAX_RECORDED_NIBBLES);
    for (let i = 0; i < count; i++) this.pktNibbles[i] = nibbleAt(bytes, k + i);
  }

  /**
   * A pause in the stream, before the next byte (STP v1 only; v2 synchronises on ASYNC).
   * A pause >= the resync pause ends a discarding stretch; one above the max pause flushes
   * open messages as unfinished.
   */
  pause(ms: number): void {
    if (this.version !== 1) return;
    if (ms >= this.resyncPauseMs) {
      if (this.state === ParserState.V1_DISCARD) {
        const len = this.pos - this.discardStart;
        if (len > 0) {
          this.pseudoPacket(Pkt.DISCARDED, this.discardStart, len);
          this.asm.sink.discardedNibbles(len, this.discardStart);
        }
        this.asm.v1Resync();
        this.state = ParserState.OPCODE1;
      } else if (this.state !== ParserState.OPCODE1) {
        this.pseudoPacket(Pkt.TRUNCATED, this.pktStart, this.pktLen);
        this.state = ParserState.OPCODE1;
      }
    }
    if (ms > this.maxPauseMs) {
      this.asm.at = this.pos;
      this.asm.longPause();
    }
  }

  /** Input was lost before the next byte: the stream cannot be trusted until the next sync. */
  lost(): void {
    this.asm.at = this.pos;
    this.asm.inputLost();
    this.loseSync(this.pos);
  }

  /** End of input: a packet cut short is reported as TRUNCATED, a discarded tail as DISCARDED. */
  finishStream(): void {
    switch (this.state) {
      case ParserState.OPCODE1:
      case ParserState.UNSYNCED:
        break;
      case ParserState.V1_DISCARD: {
        const len = this.pos - this.discardStart;
        if (len > 0) {
          this.pseudoPacket(Pkt.DISCARDED, this.discardStart, len);
          this.asm.sink.discardedNibbles(len, this.discardStart);
          this.discardStart = this.pos;
        }
        break;
      }
      default:
        this.pseudoPacket(Pkt.TRUNCATED, this.pktStart, this.pktLen);
        this.state = ParserState.OPCODE1;
    }
    if (this.state === ParserState.UNSYNCED) {
      const len = this.pos - this.discardStart;
      if (len > 0) this.asm.sink.discardedNibbles(len, this.discardStart);
      this.discardStart = this.pos;
    }
  }

  /** Packets still being received when the stream ends (for reports). */
  get midPacket(): boolean {
    return (
      this.state !== ParserState.OPCODE1 && this.state !== ParserState.UNSYNCED && this.state !== ParserState.V1_DISCARD
    );
  }

  private nibble(n: number): void {
    switch (this.state) {
      case ParserState.OPCODE1:
        this.pktStart = this.pos;
        this.pktNibbles[0] = n;
        this.pktLen = 1;
        if (this.version === 1) {
          const kind = V1_OPCODES[n];
          if (kind < 0) this.illegal();
          else this.begin(kind);
        } else if (n === 15) {
          this.state = ParserState.OPCODE2;
        } else if (this.expectVersion) {
          this.versionMissing();
        } else {
          this.begin(V2_OPCODES_1[n]);
        }
        break;
      case ParserState.PAYLOAD:
        this.record(n);
        if (--this.remaining === 0) this.afterPayload();
        break;
      case ParserState.OPCODE2:
        this.record(n);
        if (n === 0) this.state = ParserState.OPCODE3;
        else if (n === 15) {
          this.asyncCount = 2;
          this.state = ParserState.ASYNC_RUN;
        } else if (this.expectVersion) this.versionMissing();
        else this.begin(V2_OPCODES_2[n]);
        break;
      case ParserState.OPCODE3: {
        this.record(n);
        const kind = V2_OPCODES_3[n];
        if (kind < 0 || (this.expectVersion && kind !== Pkt.VERSION)) this.versionMissing();
        else this.begin(kind);
        break;
      }
      case ParserState.TS_LENGTH:
        this.record(n);
        if (n === 15) this.illegal();
        else if (n === 0) this.timestampFieldEnd(0, 0);
        else {
          this.tsRemaining = this.tsValueNibbles = n <= 12 ? n : n === 13 ? 14 : 16;
          this.state = ParserState.TS_VALUE;
        }
        break;
      case ParserState.TS_VALUE:
        this.record(n);
        if (--this.tsRemaining === 0) {
          const count = this.tsValueNibbles;
          this.timestampFieldEnd(
            this.recordedValue(this.pktLen - count, count - 8),
            this.recordedValue(this.pktLen - Math.min(count, 8), Math.min(count, 8)),
          );
        }
        break;
      case ParserState.USER_LENGTH:
        this.record(n);
        this.remaining = n + 1;
        this.payloadStart = this.pktLen;
        this.state = ParserState.PAYLOAD;
        break;
      case ParserState.ASYNC_RUN:
        this.record(n);
        if (n === 15) {
          this.asyncCount++;
          // Synchronised, F,F opens an ASYNC of exactly 21 F; before that, longer runs are fine.
          if (this.synced && !this.expectVersion && this.asyncCount > ASYNC_F_COUNT) this.badAsync();
        } else if (n === 0 && this.asyncCount >= ASYNC_F_COUNT) {
          this.pseudoPacket(Pkt.ASYNC, this.pktStart, this.asyncCount + 1);
          this.expectVersion = true;
          this.syncVia = SyncVia.ASYNC;
          this.state = ParserState.OPCODE1;
        } else {
          this.badAsync();
        }
        break;
      case ParserState.UNSYNCED:
        this.searchSync(n);
        break;
      case ParserState.V1_DISCARD:
        break;
      case ParserState.TIME_CLOCK:
        this.record(n);
        this.state = ParserState.TIME_VERSION;
        break;
      case ParserState.TIME_VERSION:
        // The time field is coded as a timestamp of this version (read by the timestamp states,
        // without touching the running timestamp); 0 and 5..F are illegal as for VERSION.
        this.record(n);
        this.inTimeField = true;
        if (n === 1) {
          this.tsRemaining = this.tsValueNibbles = 2;
          this.state = ParserState.TS_VALUE;
        } else if (n >= 2 && n <= 4) this.state = ParserState.TS_LENGTH;
        else this.illegal();
        break;
    }
    this.pos++;
  }

  /**
   * Recorded nibbles `[start, start + count)` (count at most 8; none when 0 or less) as a
   * number, the first most significant: the slow path reads a packet's values at its end.
   */
  private recordedValue(start: number, count: number): number {
    let v = 0;
    for (let i = start; i < start + count; i++) v = (v << 4) | this.pktNibbles[i];
    return v >>> 0;
  }

  private record(n: number): void {
    if (this.pktLen < MAX_RECORDED_NIBBLES) this.pktNibbles[this.pktLen] = n;
    this.pktLen++;
  }

  private begin(kind: Pkt): void {
    this.pktKind = kind;
    this.payloadStart = this.pktLen;
    this.payloadLen = 0;
    this.tsLen = 0;
    const payload = PKT_PAYLOAD[kind];
    if (payload > 0) {
      this.remaining = payload;
      this.state = ParserState.PAYLOAD;
    } else if (payload === -1) {
      this.state = ParserState.USER_LENGTH;
    } else if (payload === -2) {
      this.state = ParserState.TIME_CLOCK;
    } else {
      this.afterPayload();
    }
  }

  private afterPayload(): void {
    const kind = this.pktKind;
    this.payloadLen = this.pktLen - this.payloadStart;
    const value = this.payloadLo();
    if (kind === Pkt.VERSION && (value === 0 || value > 4)) {
      // VERSION 0 and 5..F are illegal for Fido (spec §4).
      this.illegal();
      return;
    }
    if (PKT_TS[kind] === 0) {
      this.complete(this.payloadHi(), value);
      return;
    }
    this.tsStart = this.pktLen;
    if (this.version === 1 || this.tsVersion === 1) {
      this.tsFixed = true;
      this.tsRemaining = this.tsValueNibbles = 2;
      this.state = ParserState.TS_VALUE;
    } else {
      this.tsFixed = false;
      this.state = ParserState.TS_LENGTH;
    }
  }

  /**
   * The slow path's end of a timestamp field whose value is `vHi:vLo`: a TIME packet's time field
   * goes on to its own timestamp, a packet's timestamp completes it.
   */
  private timestampFieldEnd(vHi: number, vLo: number): void {
    if (this.inTimeField) {
      this.inTimeField = false;
      this.afterPayload();
      return;
    }
    this.timestampDone(vHi, vLo);
    this.complete(this.payloadHi(), this.payloadLo());
  }

  /** A packet's timestamp field, value `vHi:vLo`, updates the running timestamp (spec §4). */
  private timestampDone(vHi: number, vLo: number): void {
    this.tsLen = this.pktLen - this.tsStart;
    if (this.tsFixed) {
      this.tsHi = 0;
      this.tsLo = vLo;
    } else if (this.tsLen > 1) {
      this.applyTimestamp(this.tsValueNibbles, vHi, vLo);
    }
    this.asm.sink.deviceTimestamp(this.tsHi, this.tsLo, this.tsFixed);
  }

  /** Versions 2–4 of the variable-length timestamp field: `n` nibbles of value `vHi:vLo`. */
  private applyTimestamp(n: number, vHi: number, vLo: number): void {
    if (this.tsVersion === 2) {
      const lo = this.tsLo + vLo;
      this.tsHi = (this.tsHi + vHi + (lo > 0xffffffff ? 1 : 0)) >>> 0;
      this.tsLo = lo >>> 0;
      return;
    }
    let hi = this.tsHi;
    let lo = this.tsLo;
    if (this.tsVersion === 4) {
      lo = (lo ^ ((lo >>> 1) | (hi << 31))) >>> 0;
      hi = (hi ^ (hi >>> 1)) >>> 0;
    }
    const bits = n * 4;
    if (bits >= 64) {
      hi = vHi;
      lo = vLo;
    } else if (bits >= 32) {
      const keep = bits === 32 ? 0xffffffff : ~((1 << (bits - 32)) - 1) >>> 0;
      hi = ((hi & keep) | vHi) >>> 0;
      lo = vLo;
    } else {
      const keep = ~((1 << bits) - 1) >>> 0;
      lo = ((lo & keep) | vLo) >>> 0;
    }
    if (this.tsVersion === 4) {
      // Gray to binary over 64 bits: the low half also takes the XOR of every bit of the high half.
      const h = prefixXor32(hi);
      hi = h;
      lo = (h & 1 ? ~prefixXor32(lo) : prefixXor32(lo)) >>> 0;
    }
    this.tsHi = hi;
    this.tsLo = lo;
  }

  /** A packet, whose payload value is `hi:lo`, is complete: report it, then let the reassembler act on it. */
  private complete(hi: number, lo: number): void {
    this.state = ParserState.OPCODE1;
    this.packets++;
    if (this.observer !== null) this.observer(this);
    this.act(this.pktKind, hi, lo);
  }

  /** The recorded payload's value, high half (of its low 64 bits: TIME's fields may be longer). */
  private payloadHi(): number {
    const count = Math.min(this.payloadLen, 16);
    return this.recordedValue(this.payloadStart + this.payloadLen - count, count - 8);
  }

  /** The recorded payload's value, low half. */
  private payloadLo(): number {
    const count = Math.min(this.payloadLen, 8);
    return this.recordedValue(this.payloadStart + this.payloadLen - count, count);
  }

  /** What a complete packet does, given its payload value `hi:lo` (the position is its last nibble). */
  private act(kind: Pkt, hi: number, lo: number): void {
    const asm = this.asm;
    asm.at = this.pos + 1;
    switch (PKT_ACTION[kind]) {
      case Action.DATA: {
        const hasTs = this.version === 2 && PKT_TS[kind] === 1;
        if (hasTs) {
          asm.closeTsHi = this.tsHi;
          asm.closeTsLo = this.tsLo;
        }
        if (!asm.data(PKT_BYTES[kind], hi, lo, PKT_CLOSES[kind], hasTs, this.tsFixed)) {
          this.loseSync(this.pos + 1);
        }
        break;
      }
      case Action.NONE:
        break;
      case Action.FLAG:
        if (kind === Pkt.FLAG_TS) {
          asm.closeTsHi = this.tsHi;
          asm.closeTsLo = this.tsLo;
        }
        asm.flag(PKT_CLOSES[kind], kind === Pkt.FLAG_TS, this.tsFixed);
        break;
      case Action.MASTER:
        asm.setMaster(lo, PKT_KEEP[kind]);
        break;
      case Action.CHANNEL:
        asm.setChannel(lo, PKT_KEEP[kind]);
        break;
      case Action.ERROR:
        asm.errorPacket(PKT_CLOSES[kind], lo);
        break;
      case Action.FREQ:
        asm.sink.frequency(lo);
        break;
      case Action.VERSION:
        this.versionPacket(lo);
        break;
    }
  }

  /** VERSION: the timestamp format of what follows, and (again) a synchronised stream. */
  private versionPacket(version: number): void {
    const asm = this.asm;
    this.tsVersion = version;
    this.tsHi = 0;
    this.tsLo = 0;
    this.expectVersion = false;
    this.syncVia = SyncVia.NONE;
    if (!this.synced) {
      this.synced = true;
      const skipped = this.syncStart - this.discardStart;
      if (skipped > 0) asm.sink.discardedNibbles(skipped, this.discardStart);
    }
    asm.versionPacket();
    asm.sink.timestampFormat(version);
  }

  /** A pseudo-packet of the packet list (ASYNC, NULL_SYNC, ILLEGAL, DISCARDED, TRUNCATED). */
  private pseudoPacket(kind: Pkt, start: number, len: number): void {
    if (this.observer === null) return;
    const savedKind = this.pktKind;
    const savedStart = this.pktStart;
    const savedLen = this.pktLen;
    this.pktKind = kind;
    this.pktStart = start;
    this.pktLen = len;
    this.observer(this);
    this.pktKind = savedKind;
    this.pktStart = savedStart;
    this.pktLen = savedLen;
  }

  /** Where VERSION had to come, something else came. After 22 NULLs that just means no sync. */
  private versionMissing(): void {
    if (!this.synced && this.syncVia === SyncVia.NULLS) this.silentResearch();
    else this.illegal();
  }

  private badAsync(): void {
    const run = this.asyncCount;
    const runStart = this.pktStart;
    const tooLong = this.pktNibbles[Math.min(this.pktLen, MAX_RECORDED_NIBBLES) - 1] === 15;
    if (!this.synced && this.syncVia === SyncVia.NULLS) this.silentResearch();
    else this.illegal();
    if (tooLong && this.state === ParserState.UNSYNCED) {
      // A run of more than 21 F may still end as a (longer) ASYNC: keep counting it.
      this.fRun = run;
      this.fStart = runStart;
    }
  }

  private silentResearch(): void {
    this.state = ParserState.UNSYNCED;
    this.expectVersion = false;
    this.syncVia = SyncVia.NONE;
    this.fRun = 0;
    this.zeroRun = 0;
  }

  /** An illegal packet: report it with its nibbles, drop open buffers, wait for the next sync. */
  private illegal(): void {
    const count = Math.min(this.pktLen, MAX_RECORDED_NIBBLES);
    this.pktKind = Pkt.ILLEGAL;
    if (this.observer !== null) this.observer(this);
    this.asm.at = this.pktStart;
    this.asm.illegal(this.pktNibbles.subarray(0, count));
    this.loseSync(this.pos + 1);
    if (this.version === 2) {
      // The failing nibble may open the run of the next ASYNC (or of 22 NULLs).
      const bad = this.pktNibbles[count - 1];
      if (bad === 15) {
        this.fRun = 1;
        this.fStart = this.pos;
      } else if (bad === 0) {
        this.zeroRun = 1;
        this.zeroStart = this.pos;
      }
    }
  }

  private loseSync(next: number): void {
    this.discardStart = next;
    this.inTimeField = false;
    this.expectVersion = false;
    this.syncVia = SyncVia.NONE;
    if (this.version === 1) {
      this.state = ParserState.V1_DISCARD;
    } else {
      this.state = ParserState.UNSYNCED;
      this.synced = false;
      this.fRun = 0;
      this.zeroRun = 0;
    }
  }

  private searchSync(n: number): void {
    if (n === 15 && this.zeroRun >= NULL_SYNC_COUNT) {
      // 22 NULLs: the next packet must be VERSION (or an ASYNC).
      this.syncFound(Pkt.NULL_SYNC, this.zeroStart, this.zeroRun, SyncVia.NULLS);
      this.pktStart = this.pos;
      this.pktNibbles[0] = n;
      this.pktLen = 1;
      this.zeroRun = 0;
      this.state = ParserState.OPCODE2;
      return;
    }
    if (n === 0 && this.fRun >= ASYNC_F_COUNT) {
      this.syncFound(Pkt.ASYNC, this.fStart, this.fRun + 1, SyncVia.ASYNC);
      this.fRun = 0;
      this.state = ParserState.OPCODE1;
      return;
    }
    // The runs of F (an ASYNC) and of 0 (22 NULLs) that the next sync may end.
    if (n !== 15) this.fRun = 0;
    else if (this.fRun++ === 0) this.fStart = this.pos;
    if (n !== 0) this.zeroRun = 0;
    else if (this.zeroRun++ === 0) this.zeroStart = this.pos;
  }

  /** An ASYNC or 22 NULLs found while unsynchronised: VERSION must come next. */
  private syncFound(kind: Pkt, start: number, length: number, via: SyncVia): void {
    this.pseudoPacket(kind, start, length);
    this.syncStart = start;
    this.syncVia = via;
    this.expectVersion = true;
  }

  /** The whole parser state as plain JSON (see `restore`). */
  snapshot(): Record<string, number | boolean | number[]> {
    return {
      state: this.state,
      pos: this.pos,
      packets: this.packets,
      pktKind: this.pktKind,
      pktStart: this.pktStart,
      pktLen: this.pktLen,
      pktNibbles: Array.from(this.pktNibbles.subarray(0, Math.min(this.pktLen, MAX_RECORDED_NIBBLES))),
      payloadStart: this.payloadStart,
      payloadLen: this.payloadLen,
      tsStart: this.tsStart,
      tsLen: this.tsLen,
      tsFixed: this.tsFixed,
      inTimeField: this.inTimeField,
      remaining: this.remaining,
      tsRemaining: this.tsRemaining,
      tsValueNibbles: this.tsValueNibbles,
      tsHi: this.tsHi,
      tsLo: this.tsLo,
      tsVersion: this.tsVersion,
      synced: this.synced,
      expectVersion: this.expectVersion,
      syncVia: this.syncVia,
      asyncCount: this.asyncCount,
      fRun: this.fRun,
      fStart: this.fStart,
      zeroRun: this.zeroRun,
      zeroStart: this.zeroStart,
      discardStart: this.discardStart,
      syncStart: this.syncStart,
    };
  }

  restore(s: Record<string, unknown>): void {
    const self = this as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(s)) {
      if (key === 'pktNibbles') this.pktNibbles.set(value as number[]);
      // Only the fields this parser has (an older snapshot may hold values it now reads from the nibbles).
      else if (key in this) self[key] = value;
    }
  }
}

/** Nibble k of a byte stream: bits [3:0] of byte k/2 for even k, bits [7:4] for odd k. */
function nibbleAt(bytes: Uint8Array, k: number): number {
  return (bytes[k >> 1] >>> ((k & 1) << 2)) & 15;
}

/** `count` (at most 8) nibbles from nibble k, the first one most significant; whole bytes at a time. */
function nibblesValue(bytes: Uint8Array, k: number, count: number): number {
  const end = k + count;
  let i = k;
  let v = 0;
  if (i & 1 && i < end) v = bytes[i++ >> 1] >>> 4;
  for (; i + 1 < end; i += 2) {
    const b = bytes[i >> 1];
    v = (v << 8) | ((b & 15) << 4) | (b >>> 4);
  }
  if (i < end) v = (v << 4) | (bytes[i >> 1] & 15);
  return v >>> 0;
}

/** Gray to binary within 32 bits: each bit becomes the XOR of itself and every bit above it. */
function prefixXor32(v: number): number {
  let x = v;
  x ^= x >>> 16;
  x ^= x >>> 8;
  x ^= x >>> 4;
  x ^= x >>> 2;
  x ^= x >>> 1;
  return x >>> 0;
}
