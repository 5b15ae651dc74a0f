import { type DecodedRecord, RecordName } from '@tracehub/contracts';
import { QsRecordId, QsRxId } from '@tracehub/qs';
import { QS_CMD_ENUM_GROUP } from './name-index.js';
import {
  Channel,
  CMD_ENUM_FROM_VERSION,
  FE_PACKET_NAMES,
  FePacket,
  Lines,
  MAX_TEXT_CHARS,
  SILENT_TEXT_RECORDS,
} from './protocol.js';
import { MAX_RX_FRAME_BYTES, type QsTargetLink } from './target-link.js';

/** A front-end's UDP address. */
export interface FrontEndPeer {
  address: string;
  port: number;
}

/** Things worth a log line that never reach a front-end (qspy prints them on its console). */
export type FrontEndEvent =
  | { kind: 'attached'; peer: FrontEndPeer; channels: number }
  | { kind: 'detached'; peer: FrontEndPeer; shutdownRequested: boolean }
  | { kind: 'refused'; peer: FrontEndPeer; holder: FrontEndPeer }
  | { kind: 'taken-over'; peer: FrontEndPeer; from: FrontEndPeer; idleMs: number }
  | { kind: 'released'; peer: FrontEndPeer }
  | { kind: 'ignored'; peer: FrontEndPeer; bytes: number; why: string }
  | { kind: 'note'; peer: FrontEndPeer; noteKind: number; text: string }
  | { kind: 'output-toggle'; peer: FrontEndPeer; output: string; action: number | null };

export interface QspyFrontEndOptions {
  /** The link's target side (shared with every other sender of commands on the link). */
  target: QsTargetLink;
  /** Sends one datagram. Must not block: a slow or vanished front-end never holds the link. */
  send(datagram: Uint8Array, to: FrontEndPeer): void;
  /** Console-only events (attach, detach, notes...). */
  onEvent?(event: FrontEndEvent): void;
  /**
   * An ATTACH from another address takes the port from a front-end that has sent nothing for
   * this long (ms): a crashed qutest run no longer holds the port until a restart. 0 (the
   * default) keeps qspy's behaviour: the port stays held until its holder detaches.
   */
  idleTakeoverMs?: number;
}

/** What the port shows to operators. */
export interface FrontEndStatus {
  /** The front-end that holds the port (its first datagram latched it), or null. */
  peer: FrontEndPeer | null;
  /** Channel bits of its last ATTACH (0: not attached or detached). */
  channels: number;
  datagramsIn: number;
  datagramsOut: number;
  /** Datagrams from other front-ends while the port was held. */
  refused: number;
  /** Datagrams dropped as malformed (empty, 1 byte). */
  ignored: number;
  /** When the holder's last datagram arrived (the caller's clock, ms), or null. */
  lastHeardMs: number | null;
}

const DETACH_PACKET_ID = FePacket.DETACH;

/**
 * qspy 7.4.0's UDP front-end protocol for one link, as a pure state machine (front-end spec
 * 3 to 13): datagrams from front-ends and the target's records in; datagrams to the front-end
 * and QS-RX frames (through the shared `QsTargetLink`) out. No sockets, no clock.
 *
 * Deliberate differences from qspy 7.4.0, where it crashes or corrupts its state
 * (spec 13.2): an empty datagram is ignored (qspy exits), a 1-byte datagram is ignored (qspy
 * re-runs the previous packet), a QS-RX frame longer than 512 bytes is refused with an error
 * line (qspy overruns its buffer), name-resolved packets without their terminating NUL are
 * refused with the "incorrect" line, and an error line whose stale record id qspy's own
 * filter would drop is sent with id 128 instead. DETACH with a payload detaches but does not
 * stop the service.
 */
export class QspyFrontEnd {
  private peer: FrontEndPeer | null = null;
  private channels = 0;
  /** Sequence number of the last datagram from the front-end. */
  private feSeq = 0;
  /** qspy's own transmit counter (ATTACH reply, text lines, DETACH). */
  private beSeq = 0;
  /** The record id qspy handled last: the `rec` byte of lines that have none of their own. */
  private staleRec = 0;
  private readonly counters = { datagramsIn: 0, datagramsOut: 0, refused: 0, ignored: 0 };
  private lastHeardMs: number | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: QspyFrontEndOptions) {
    this.unsubscribe = options.target.onRecord((record) => this.targetRecord(record));
  }

  status(): FrontEndStatus {
    return {
      peer: this.peer ? { ...this.peer } : null,
      channels: this.channels,
      ...this.counters,
      lastHeardMs: this.peer ? this.lastHeardMs : null,
    };
  }

  /**
   * One datagram from a front-end. `nowMs` is the caller's clock; it only matters for the
   * idle takeover.
   */
  datagram(bytes: Uint8Array, from: FrontEndPeer, nowMs = 0): void {
    this.counters.datagramsIn++;
    if (bytes.length === 0) {
      this.ignore(from, 0, 'empty datagram');
      return;
    }
    if (this.peer !== null && !samePeer(this.peer, from) && this.mayTakeOver(bytes, nowMs)) {
      const idleMs = nowMs - (this.lastHeardMs ?? nowMs);
      const previous = this.peer;
      this.release();
      this.options.onEvent?.({ kind: 'taken-over', peer: from, from: previous, idleMs });
    }
    if (this.peer === null) this.peer = { address: from.address, port: from.port };
    else if (!samePeer(this.peer, from)) {
      this.counters.refused++;
      this.options.onEvent?.({ kind: 'refused', peer: from, holder: { ...this.peer } });
      this.errorLine(this.staleRec, Lines.socketInUse);
      return;
    }
    this.lastHeardMs = nowMs;
    if (bytes.length < 2) {
      this.ignore(from, bytes.length, 'datagram shorter than [seq][id]');
      return;
    }
    const seq = bytes[0];
    const id = bytes[1];
    if (this.channels !== 0) {
      const expected = (this.feSeq + 1) & 0xff;
      if (seq !== expected) this.errorLine(this.staleRec, Lines.discontinuity(expected, seq));
    }
    this.feSeq = seq;
    if (id < 128) {
      this.sendRaw(bytes.subarray(1));
      return;
    }
    this.staleRec = id;
    switch (id) {
      case FePacket.ATTACH:
        this.attach(bytes, from);
        return;
      case FePacket.DETACH:
        this.detach(bytes.length > 2);
        return;
      case FePacket.SAVE_DICT:
        this.errorLine(id, Lines.noDictionaryFile);
        return;
      case FePacket.TEXT_OUT:
      case FePacket.BIN_OUT:
      case FePacket.MATLAB_OUT:
        this.options.onEvent?.({
          kind: 'output-toggle',
          peer: from,
          output: FE_PACKET_NAMES[id],
          action: bytes.length > 2 ? bytes[2] : null,
        });
        return;
      case FePacket.SEQUENCE_OUT:
        this.errorLine(id, Lines.noSequenceList);
        return;
      case FePacket.SEND_EVENT:
        this.sendEvent(bytes);
        return;
      case FePacket.SEND_AO_FILTER:
      case FePacket.SEND_CURR_OBJ:
        this.sendObjectCommand(bytes, id);
        return;
      case FePacket.SEND_COMMAND:
        this.sendCommand(bytes);
        return;
      case FePacket.SEND_TEST_PROBE:
        this.sendTestProbe(bytes);
        return;
      case FePacket.CLEAR_SCREEN:
        return;
      case FePacket.SHOW_NOTE: {
        const text = bytes.length > 3 ? (readName(bytes, 3) ?? latin1(bytes, 3, bytes.length)) : '';
        this.options.onEvent?.({ kind: 'note', peer: from, noteKind: bytes.length > 2 ? bytes[2] : 0, text });
        return;
      }
      default:
        this.errorLine(id, Lines.unrecognized(id));
    }
  }

  /**
   * Frees the port (an operator's request, or an idle takeover): the holder gets DETACH, as
   * from a qspy that exits, and the next datagram from anyone latches the port.
   */
  release(): void {
    if (this.peer === null) return;
    const peer = this.peer;
    this.beSeq = (this.beSeq + 1) & 0xff;
    this.out(Uint8Array.of(this.beSeq, DETACH_PACKET_ID));
    this.peer = null;
    this.channels = 0;
    this.options.onEvent?.({ kind: 'released', peer });
  }

  /** The port (or the link it serves) is going away: tell the attached front-end, as qspy does. */
  shutdown(): void {
    this.release();
    this.unsubscribe();
  }

  private mayTakeOver(bytes: Uint8Array, nowMs: number): boolean {
    const idle = this.options.idleTakeoverMs ?? 0;
    return idle > 0 && bytes.length >= 2 && bytes[1] === FePacket.ATTACH && nowMs - (this.lastHeardMs ?? 0) >= idle;
  }

  // Front-end packets --------------------------------------------------------------------------

  private attach(bytes: Uint8Array, from: FrontEndPeer): void {
    this.channels = bytes.length > 2 ? bytes[2] : Channel.BINARY;
    this.feSeq = bytes[0];
    this.beSeq = 1;
    this.out(Uint8Array.of(this.beSeq, FePacket.ATTACH));
    this.options.onEvent?.({ kind: 'attached', peer: from, channels: this.channels });
  }

  private detach(shutdownRequested: boolean): void {
    const peer = this.peer as FrontEndPeer;
    this.peer = null;
    this.channels = 0;
    this.options.onEvent?.({ kind: 'detached', peer, shutdownRequested });
  }

  /** Raw QS-RX packets (ids 0..127) go to the target unchanged but for qspy's own sequence number. */
  private sendRaw(body: Uint8Array): void {
    const sent = this.options.target.send(body);
    if ('reason' in sent) {
      if (sent.reason === 'too-long')
        this.errorLine(this.staleRec, Lines.frameTooLong(sent.id, sent.length, MAX_RX_FRAME_BYTES));
      else this.errorLine(this.staleRec, Lines.sendFailed(sent.id, sent.length));
    }
  }

  /** Name-resolved packets: a send that fails for want of a target is silent, as in qspy. */
  private sendResolved(body: Uint8Array, packetId: number): void {
    const sent = this.options.target.send(body);
    if ('reason' in sent && sent.reason === 'too-long') {
      this.errorLine(packetId, Lines.frameTooLong(sent.id, sent.length, MAX_RX_FRAME_BYTES));
    }
  }

  private sendEvent(bytes: Uint8Array): void {
    const target = this.options.target;
    const sigSize = target.config.sigSize;
    const nameAt = 3 + sigSize + 2 + (bytes.length >= 5 + sigSize ? u16(bytes, 3 + sigSize) : 0);
    // qspy's own check: it rejects names of 0 or 1 character (and anything that ends before them).
    const name = nameAt < bytes.length - 2 ? readName(bytes, nameAt) : undefined;
    if (name === undefined) {
      this.errorLine(FePacket.SEND_EVENT, Lines.incorrect('SEND_EVENT'));
      return;
    }
    // An unknown signal is sent as signal 0 (a qspy quirk that test scripts may rely on).
    const sig = target.names.signal(name, target.scope) ?? 0;
    const body = bytes.slice(1, nameAt);
    body[0] = QsRxId.QS_RX_EVENT;
    writeLe(body, 2, BigInt(sig), sigSize);
    this.sendResolved(body, FePacket.SEND_EVENT);
  }

  private sendObjectCommand(bytes: Uint8Array, packetId: number): void {
    const target = this.options.target;
    const objSize = target.config.objPtrSize;
    const nameAt = 3 + objSize;
    const name = readName(bytes, nameAt);
    if (name === undefined) {
      this.errorLine(packetId, Lines.incorrect(FE_PACKET_NAMES[packetId]));
      return;
    }
    const address = target.names.object(name);
    if (address === undefined) {
      this.errorLine(packetId, Lines.noObject(name));
      return;
    }
    const body = bytes.slice(1, nameAt);
    body[0] = packetId === FePacket.SEND_AO_FILTER ? QsRxId.QS_RX_AO_FILTER : QsRxId.QS_RX_CURR_OBJ;
    writePointer(body, 2, address, objSize);
    if (packetId === FePacket.SEND_CURR_OBJ) {
      const kind = body[1];
      // SM, AO and SM+AO objects scope the signal names; the frame goes out even for a bad kind.
      if (kind === 0 || kind === 1 || kind === 6) target.scope = address;
      else if (kind > 6) this.errorLine(packetId, Lines.badObjectKind(kind));
    }
    this.sendResolved(body, packetId);
  }

  private sendCommand(bytes: Uint8Array): void {
    const target = this.options.target;
    const name = readName(bytes, 15);
    if (name === undefined) {
      this.errorLine(FePacket.SEND_COMMAND, Lines.incorrect('SEND_COMMAND'));
      return;
    }
    const value =
      target.config.version >= CMD_ENUM_FROM_VERSION
        ? target.names.enumValue(QS_CMD_ENUM_GROUP, name)
        : target.names.userRecord(name);
    if (value === undefined) {
      this.errorLine(FePacket.SEND_COMMAND, Lines.noCommand(name));
      return;
    }
    const body = bytes.slice(1, 15);
    body[0] = QsRxId.QS_RX_COMMAND;
    body[1] = value & 0xff;
    this.sendResolved(body, FePacket.SEND_COMMAND);
  }

  private sendTestProbe(bytes: Uint8Array): void {
    const target = this.options.target;
    const funSize = target.config.funPtrSize;
    const nameAt = 6 + funSize;
    const name = readName(bytes, nameAt);
    if (name === undefined) {
      this.errorLine(FePacket.SEND_TEST_PROBE, Lines.incorrect('SEND_TEST_PROBE'));
      return;
    }
    const fun = target.names.function(name);
    if (fun === undefined) {
      this.errorLine(FePacket.SEND_TEST_PROBE, Lines.noFunction(name));
      return;
    }
    const body = bytes.slice(1, nameAt);
    body[0] = QsRxId.QS_RX_TEST_PROBE;
    writePointer(body, 5, fun, funSize);
    this.sendResolved(body, FePacket.SEND_TEST_PROBE);
  }

  // Target records -----------------------------------------------------------------------------

  private targetRecord(record: DecodedRecord): void {
    const raw = record.raw;
    // Records that came in a whole frame (good ones, and ones whose payload does not fit their
    // layout): forwarded, then rendered. Frame errors and gaps only print a line.
    const framed = (record.type >= 0 || record.type === -5) && raw.length >= 3;
    if (framed) {
      const id = raw[1];
      this.staleRec = id;
      if (id === 0 || this.peer === null) return;
      if (
        (this.channels & Channel.BINARY) !== 0 ||
        (id === QsRecordId.QS_TARGET_INFO && (this.channels & Channel.TEXT) !== 0)
      ) {
        this.out(raw.subarray(0, raw.length - 1));
      }
      if ((this.channels & Channel.TEXT) === 0 || SILENT_TEXT_RECORDS.has(id) || record.text === '') return;
      for (const line of record.text.split('\n')) this.textLine(id, line);
      return;
    }
    // The link's own loss notices have no qspy counterpart; everything else is qspy's line.
    if (record.text === '' || record.name === RecordName.LINK_LOST) return;
    for (const line of record.text.split('\n')) this.errorLine(this.staleRec, line);
  }

  // Output -------------------------------------------------------------------------------------

  /** A qspy error or warning line: its `rec` is whatever qspy handled last, but never an id qspy would drop. */
  private errorLine(rec: number, text: string): void {
    this.textLine(SILENT_TEXT_RECORDS.has(rec) ? FePacket.ATTACH : rec, text);
  }

  private textLine(rec: number, text: string): void {
    if (this.peer === null || (this.channels & Channel.TEXT) === 0) return;
    const n = Math.min(text.length, MAX_TEXT_CHARS);
    const datagram = new Uint8Array(3 + n);
    this.beSeq = (this.beSeq + 1) & 0xff;
    datagram[0] = this.beSeq;
    datagram[1] = 0;
    datagram[2] = rec;
    for (let i = 0; i < n; i++) datagram[3 + i] = text.charCodeAt(i) & 0xff;
    this.out(datagram);
  }

  private out(datagram: Uint8Array): void {
    if (this.peer === null) return;
    this.counters.datagramsOut++;
    this.options.send(datagram, this.peer);
  }

  private ignore(peer: FrontEndPeer, length: number, why: string): void {
    this.counters.ignored++;
    this.options.onEvent?.({ kind: 'ignored', peer, bytes: length, why });
  }
}

function samePeer(a: FrontEndPeer, b: FrontEndPeer): boolean {
  return a.port === b.port && a.address === b.address;
}

function u16(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

/** The zero-terminated string at `at` (one character per byte), or undefined if it has no NUL. */
function readName(b: Uint8Array, at: number): string | undefined {
  if (at >= b.length) return undefined;
  const end = b.indexOf(0, at);
  return end < 0 ? undefined : latin1(b, at, end);
}

function latin1(b: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(b[i]);
  return s;
}

function writeLe(b: Uint8Array, at: number, value: bigint, size: number): void {
  let v = BigInt.asUintN(size * 8, value);
  for (let i = 0; i < size; i++) {
    b[at + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/** qspy writes looked-up addresses only for 2-, 4- and 8-byte pointers. */
function writePointer(b: Uint8Array, at: number, value: bigint, size: number): void {
  if (size === 2 || size === 4 || size === 8) writeLe(b, at, value, size);
}
