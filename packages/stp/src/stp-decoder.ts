import type { ChunkContext, DecodedRecord, EmitRecord, JsonValue, LinkMarker, TraceDecoder } from '@tracehub/contracts';
import { OutputBuffer } from '@tracehub/contracts/output-buffer';
import {
  CLOSED_BY_NAMES,
  ClosedBy,
  DEFAULT_TRACEBOX_PORT,
  EXCEPTION_NAMES,
  type ExceptionCode,
  MARKER_NAMES,
  MarkerCode,
  OST_PROTOCOL_XTIV3,
  SENDER_MAIN,
  TB_TRACE_MSG,
  TimestampFlag,
} from './constants.js';
import { CONTROL_RECORD_NAMES } from './control.js';
import { exceptionEvent, markerEvent, type StpEvent, writeMessageEventJson } from './fixture-format.js';
import { bytesToHex, hex64 } from './hex.js';
import { encodeOstMarker, encodeOstTraceParts } from './ost.js';
import { type PacketObserver, StpPacketParser } from './packet-parser.js';
import { encodePhonetException, encodePhonetMarker, encodePhonetTraceParts } from './phonet.js';
import {
  DEFAULT_LIMITS,
  type MessageBuffer,
  type OutputProtocol,
  type ReassemblerLimits,
  type ReassemblySink,
  StpReassembler,
} from './reassembler.js';
import { dataText, messageText } from './text.js';
import { outputTimestamp, toBigInt64 } from './timestamp.js';
import type { TraceParts } from './trace-parts.js';

export interface StpDecoderOptions {
  /** STP version of the stream (default 2). */
  version?: 1 | 2;
  /** Masters whose STM sends little-endian words; all others are big-endian. */
  littleEndianMasters?: number[];
  /** Output protocol whose rules apply (default 'ost'). */
  output?: OutputProtocol;
  /** v1: pause that resynchronises the stream, ms (default 1). */
  resyncPauseMs?: number;
  /** v1: longest pause inside a message, ms (default 100). */
  maxPauseMs?: number;
  /** v1: 'synced' (default) or 'hot_plug'; v2: 'unsynchronised' (default) or 'synced'. */
  start?: 'synced' | 'hot_plug' | 'unsynchronised';
  /**
   * The pause `end()` applies: undefined = the end context's hostNs minus the last chunk's,
   * null = none (open messages stay open), a number = that many ms.
   */
  endOfStreamPauseMs?: number | null;
  /** Tracebox port / PhoNet sender object (default 0x0B). */
  port?: number;
  /**
   * Device timestamp ticks per second while the device has sent no FREQ packet (default 0:
   * the ticks are taken as nanoseconds). A FREQ packet overrides it.
   */
  tickHz?: number;
  /**
   * The time base: output time = receive time + this offset, ns (default 0). Changed during
   * a session with `setTimeBase`, which gives the two timebase markers.
   */
  timeOffsetNs?: bigint;
  limits?: Partial<ReassemblerLimits>;
  /** Called for every parsed packet (see `packetEntry`); costs nothing when absent. */
  onPacket?: PacketObserver;
  /** Called with every output event in the fixtures' `ost`/`phonet` form. */
  onEvent?: (event: StpEvent) => void;
  /**
   * The same events written as JSON lines into this buffer (the listing's way: no string or
   * object per message). When given, `onEvent` is not called.
   */
  eventLines?: OutputBuffer;
  /**
   * Build records (default true). Off, the decoder only parses, reassembles and calls `onPacket`
   * and `onEvent`: what a packet or event listing needs.
   */
  records?: boolean;
}

const NS_PER_S = 1_000_000_000n;
/** The buffer an event line is read back from for `onEvent` starts this small (it grows for a long one). */
const EVENT_TEXT_BYTES = 1024;
const NO_BYTES = new Uint8Array(0);
/** A marker comment: the text's UTF-8 bytes and a terminating NUL. */
function cString(text: string): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}
const OLD_TIMESTAMP = cString('Old timestamp!');
const NEW_TIMESTAMP = cString('New timestamp!');

/** The JSON-able part of the options, kept in snapshots. */
function configOf(o: StpDecoderOptions): JsonValue {
  return {
    version: o.version ?? 2,
    littleEndianMasters: o.littleEndianMasters ?? [],
    output: o.output ?? 'ost',
    resyncPauseMs: o.resyncPauseMs ?? 1,
    maxPauseMs: o.maxPauseMs ?? 100,
    start: o.start ?? null,
    endOfStreamPauseMs: o.endOfStreamPauseMs === undefined ? 'ctx' : o.endOfStreamPauseMs,
    port: o.port ?? DEFAULT_TRACEBOX_PORT,
    tickHz: o.tickHz ?? 0,
    limits: { ...DEFAULT_LIMITS, ...o.limits } as unknown as JsonValue,
  };
}

function optionsOf(config: Record<string, JsonValue>): StpDecoderOptions {
  return {
    version: config.version as 1 | 2,
    littleEndianMasters: config.littleEndianMasters as number[],
    output: config.output as OutputProtocol,
    resyncPauseMs: config.resyncPauseMs as number,
    maxPauseMs: config.maxPauseMs as number,
    start: (config.start ?? undefined) as StpDecoderOptions['start'],
    endOfStreamPauseMs: config.endOfStreamPauseMs === 'ctx' ? undefined : (config.endOfStreamPauseMs as number | null),
    port: config.port as number,
    tickHz: (config.tickHz ?? 0) as number,
    limits: config.limits as unknown as ReassemblerLimits,
  };
}

/**
 * STP v1/v2 decoder of one link session, as the Fido trace box processes it: nibble parser,
 * reassembler, and OST or PhoNet output. Each output message, exception and marker becomes
 * one record whose `raw` is the message exactly as the trace box sends it.
 */
export class StpDecoder implements TraceDecoder, ReassemblySink {
  readonly parser: StpPacketParser;
  readonly reassembler: StpReassembler;
  private readonly options: StpDecoderOptions;
  private readonly output: OutputProtocol;
  private readonly port: number;
  /** Where events are written: the caller's `eventLines`, or a buffer of ours read back for `onEvent`. */
  private readonly eventOut: OutputBuffer | null;
  private readonly onEvent: ((event: StpEvent) => void) | null;
  private readonly buildRecords: boolean;
  private emitRecord: EmitRecord | null = null;
  private hostNs = 0n;
  /** hostNs as two halves of its 60-bit time field, and as text (computed once per chunk). */
  private hostHi = 0;
  private hostLo = 0;
  private lastHostNs: bigint | null = null;
  // Device clock: the host time of the first device timestamp, and that timestamp.
  private clockBaseHostNs: bigint | null = null;
  private clockBaseDeviceTs = 0n;
  private frequencyHz = 0;
  /** Ticks per second of the device clock while no FREQ packet said (0: ns). */
  private readonly tickHz: number;
  /** Output time minus receive time, ns (the time base). */
  private timeOffsetNs = 0n;
  /** Timestamp format of the last VERSION packet (0: none yet). */
  private tsVersion = 0;
  /** The last device timestamp decoded (to see the device clock go back). */
  private lastTsHi = 0;
  private lastTsLo = 0;
  private transaction = 0;
  private markerIndex = 0;
  /** The output message being encoded (one object, refilled for every message). */
  private readonly parts: TraceParts = { master: 0, channel: 0, tsHi: 0, tsLo: 0, data: NO_BYTES, length: 0 };
  private readonly counts = { chunks: 0, bytes: 0, records: 0, discardedNibbles: 0, lostBytes: 0, openAtEnd: 0 };

  /** Only STP v1 resynchronises on pauses: a v2 stream's chunks are decoded whole. */
  readonly usesPauses: boolean;

  constructor(options: StpDecoderOptions = {}) {
    this.options = options;
    const version = options.version ?? 2;
    this.usesPauses = version === 1;
    this.output = options.output ?? 'ost';
    this.port = options.port ?? DEFAULT_TRACEBOX_PORT;
    this.tickHz = options.tickHz !== undefined && options.tickHz > 0 ? options.tickHz : 0;
    this.timeOffsetNs = options.timeOffsetNs ?? 0n;
    this.onEvent = options.eventLines === undefined ? (options.onEvent ?? null) : null;
    this.eventOut = options.eventLines ?? (this.onEvent !== null ? new OutputBuffer(null, EVENT_TEXT_BYTES) : null);
    this.buildRecords = options.records ?? true;
    const masters = (options.littleEndianMasters ?? []).filter((m) => Number.isInteger(m) && m >= 0 && m <= 0xffff);
    const littleEndian = new Uint8Array(masters.length === 0 ? 0 : Math.max(...masters) + 1);
    for (const m of masters) littleEndian[m] = 1;
    this.reassembler = new StpReassembler(version, this.output, littleEndian, this, {
      ...DEFAULT_LIMITS,
      ...options.limits,
    });
    this.parser = new StpPacketParser(this.reassembler, {
      version,
      start: options.start,
      resyncPauseMs: options.resyncPauseMs,
      maxPauseMs: options.maxPauseMs,
    });
    this.parser.observer = options.onPacket ?? null;
  }

  push(chunk: Uint8Array, ctx: ChunkContext, emit: EmitRecord): void {
    this.emitRecord = this.buildRecords ? emit : null;
    this.arrive(ctx.hostNs, ctx.pauseNs);
    if (ctx.lostBytes !== undefined && ctx.lostBytes > 0) {
      this.counts.lostBytes += ctx.lostBytes;
      this.errorRecord(
        'STP_INPUT_LOST',
        null,
        { lostBytes: ctx.lostBytes },
        `${ctx.lostBytes} bytes lost before this chunk`,
      );
      this.parser.lost();
    }
    this.counts.chunks++;
    this.counts.bytes += chunk.length;
    this.parser.push(chunk);
    this.emitRecord = null;
  }

  end(ctx: ChunkContext, emit: EmitRecord): void {
    this.emitRecord = this.buildRecords ? emit : null;
    if (ctx.hostNs > this.hostNs) this.setHostNs(ctx.hostNs);
    this.parser.finishStream();
    const setting = this.options.endOfStreamPauseMs;
    const pauseMs =
      setting === undefined
        ? this.lastHostNs === null
          ? 0
          : Number(ctx.hostNs - this.lastHostNs) / 1e6
        : setting === null
          ? 0
          : setting;
    if (pauseMs > 0) this.parser.pause(pauseMs);
    this.lastHostNs = this.hostNs;
    for (const b of this.reassembler.openBuffers()) {
      this.counts.openAtEnd++;
      const data = b.data.subarray(0, Math.min(b.length, b.data.length));
      this.errorRecord(
        'STP_MESSAGE_OPEN_AT_END',
        { master: b.master, channel: b.channel },
        { length: b.length, data: bytesToHex(data) },
        messageText(b.master, b.channel, null, 'OPEN_AT_END', data),
      );
    }
    this.reassembler.clear();
    this.emitRecord = null;
  }

  /**
   * Applies the pause before this chunk (STP v1 timing comes only from receive times). The
   * gateway measures the link's idle time before the chunk's first byte (`pauseNs`) and cuts
   * chunks at pauses; without it, the difference of receive times stands in (offline files).
   */
  private arrive(hostNs: bigint, pauseNs: bigint | undefined): void {
    if (pauseNs !== undefined) {
      if (hostNs > this.hostNs) this.setHostNs(hostNs);
      if (this.lastHostNs !== null && pauseNs > 0n) this.parser.pause(Number(pauseNs) / 1e6);
    } else if (this.lastHostNs !== null && hostNs > this.lastHostNs) {
      this.setHostNs(hostNs);
      this.parser.pause(Number(hostNs - this.lastHostNs) / 1e6);
    }
    this.setHostNs(hostNs);
    this.lastHostNs = hostNs;
  }

  private setHostNs(hostNs: bigint): void {
    if (hostNs === this.hostNs) return;
    this.hostNs = hostNs;
    this.outputTimeChanged();
  }

  /** Receive time on the time base: the trace box's own time of this point. */
  private outNs(): bigint {
    const ns = this.hostNs + this.timeOffsetNs;
    return ns < 0n ? 0n : ns;
  }

  private outputTimeChanged(): void {
    const ns = this.outNs();
    this.hostHi = Number((ns >> 32n) & 0x0fffffffn);
    this.hostLo = Number(ns & 0xffffffffn);
  }

  /**
   * Moves the time base by setting output time = receive time + `offsetNs` from this point
   * on, as the trace box does when its application sets the time: the two timebase markers
   * (0x03) "Old timestamp!" (this point's time before) and "New timestamp!" (after).
   */
  setTimeBase(offsetNs: bigint, ctx: ChunkContext, emit: EmitRecord): void {
    this.emitRecord = emit;
    if (ctx.hostNs > this.hostNs) this.setHostNs(ctx.hostNs);
    const oldNs = this.outNs();
    this.timeOffsetNs = offsetNs;
    this.outputTimeChanged();
    this.timebaseChanged(oldNs, this.outNs());
    this.emitRecord = null;
  }

  /** A marker asked for on the live link (`th-marker`), in its place in the stream. */
  mark(marker: LinkMarker, ctx: ChunkContext, emit: EmitRecord): void {
    if (marker.kind === 'user') this.userMarker(marker.comment ?? '', ctx, emit);
    else this.setTimeBase(BigInt(marker.offsetNs), ctx, emit);
  }

  /**
   * A user-assigned marker (0x02) at this point of the stream, as the trace box inserts one
   * when its user asks: sender object 0x01 (main), the comment as a C string.
   */
  userMarker(comment: string, ctx: ChunkContext, emit: EmitRecord): void {
    this.emitRecord = emit;
    if (ctx.hostNs > this.hostNs) this.setHostNs(ctx.hostNs);
    this.emitMarker(MarkerCode.USER, NO_BYTES, cString(comment), SENDER_MAIN, this.outNs(), this.parser.pos, comment);
    this.emitRecord = null;
  }

  stats(): Record<string, number> {
    // An explicit literal: spreading `counts` here made each call build a fresh object shape.
    const c = this.counts;
    return {
      chunks: c.chunks,
      bytes: c.bytes,
      records: c.records,
      discardedNibbles: c.discardedNibbles,
      lostBytes: c.lostBytes,
      openAtEnd: c.openAtEnd,
      nibbles: this.parser.pos,
      packets: this.parser.packets,
      messages: this.reassembler.counters.messages,
      exceptions: this.reassembler.counters.exceptions,
      markers: this.reassembler.counters.markers,
      discardedMessages: this.reassembler.counters.discardedMessages,
      dataWithoutMaster: this.reassembler.counters.dataWithoutMaster,
      openBuffers: this.reassembler.openCount,
    };
  }

  snapshot(): JsonValue {
    return {
      config: configOf(this.options),
      parser: this.parser.snapshot(),
      reassembler: this.reassembler.snapshot() as JsonValue,
      hostNs: this.hostNs.toString(),
      lastHostNs: this.lastHostNs === null ? null : this.lastHostNs.toString(),
      clockBaseHostNs: this.clockBaseHostNs === null ? null : this.clockBaseHostNs.toString(),
      clockBaseDeviceTs: this.clockBaseDeviceTs.toString(),
      frequencyHz: this.frequencyHz,
      timeOffsetNs: this.timeOffsetNs.toString(),
      lastTs: [this.lastTsHi, this.lastTsLo],
      tsVersion: this.tsVersion,
      transaction: this.transaction,
      markerIndex: this.markerIndex,
      counts: { ...this.counts },
    };
  }

  /** A decoder that continues exactly where `snapshot` was taken; `options` adds the callbacks. */
  static restore(snapshot: JsonValue, options: StpDecoderOptions = {}): StpDecoder {
    const s = snapshot as Record<string, JsonValue>;
    const decoder = new StpDecoder({ ...optionsOf(s.config as Record<string, JsonValue>), ...callbacksOf(options) });
    decoder.parser.restore(s.parser as Record<string, unknown>);
    decoder.reassembler.restore(s.reassembler as Record<string, unknown>);
    if (typeof s.timeOffsetNs === 'string') decoder.timeOffsetNs = BigInt(s.timeOffsetNs);
    decoder.setHostNs(BigInt(s.hostNs as string));
    decoder.outputTimeChanged();
    decoder.lastHostNs = s.lastHostNs === null ? null : BigInt(s.lastHostNs as string);
    decoder.clockBaseHostNs = s.clockBaseHostNs === null ? null : BigInt(s.clockBaseHostNs as string);
    decoder.clockBaseDeviceTs = BigInt(s.clockBaseDeviceTs as string);
    decoder.frequencyHz = s.frequencyHz as number;
    if (Array.isArray(s.lastTs)) [decoder.lastTsHi, decoder.lastTsLo] = s.lastTs as number[];
    if (typeof s.tsVersion === 'number') decoder.tsVersion = s.tsVersion;
    decoder.transaction = s.transaction as number;
    decoder.markerIndex = s.markerIndex as number;
    Object.assign(decoder.counts, s.counts);
    return decoder;
  }

  // --- ReassemblySink -----------------------------------------------------------------------

  message(b: MessageBuffer, at: number): void {
    if (this.eventOut !== null) {
      writeMessageEventJson(this.eventOut, b, this.reassembler.closeTsHi, this.reassembler.closeTsLo, at);
      this.eventWritten();
    }
    if (this.emitRecord !== null) this.messageRecord(b);
  }

  /** The record of an output message: its OST or PhoNet bytes, fields and text. */
  private messageRecord(b: MessageBuffer): void {
    const tsHi = this.reassembler.closeTsHi;
    const tsLo = this.reassembler.closeTsLo;
    const { master, channel, data: buffer, sent: length, closedBy, tsKind, control } = b;
    const truncatedFrom = b.length > length ? b.length : -1;
    let targetTs: bigint | null = null;
    let tsFieldHi: number;
    let tsFieldLo: number;
    if (tsKind === 1) {
      targetTs = toBigInt64(tsHi, tsLo);
      const ts = outputTimestamp(TimestampFlag.DEVICE, this.deviceTimeNs(targetTs));
      tsFieldHi = Number(ts >> 32n);
      tsFieldLo = Number(ts & 0xffffffffn);
    } else {
      if (tsKind === 2) targetTs = BigInt(tsLo);
      const flag = this.clockBaseHostNs !== null ? TimestampFlag.APPROXIMATED : TimestampFlag.FIDO;
      tsFieldHi = ((flag << 28) | this.hostHi) >>> 0;
      tsFieldLo = this.hostLo;
    }
    const closingTs = tsKind === 1 ? hex64(tsHi, tsLo, 16) : tsKind === 2 ? hex64(0, tsLo, 2) : null;
    const parts = this.parts;
    parts.master = master & 0xff;
    parts.channel = channel & 0xff;
    parts.tsHi = tsFieldHi;
    parts.tsLo = tsFieldLo;
    parts.data = buffer;
    parts.length = length;
    const raw =
      this.output === 'ost'
        ? encodeOstTraceParts(this.port, parts)
        : encodePhonetTraceParts({ sender: this.port, transaction: this.nextTransaction() }, parts);
    const closed = CLOSED_BY_NAMES[closedBy];
    const fields: Record<string, unknown> = { data: bytesToHex(buffer, 0, length), length, closedBy: closed };
    if (closingTs !== null) fields.closingTs = closingTs;
    if (truncatedFrom >= 0) fields.truncatedFrom = truncatedFrom;
    if (control !== null) fields.control = { ...control };
    this.record({
      kind: 'record',
      type: this.output === 'ost' ? OST_PROTOCOL_XTIV3 : TB_TRACE_MSG,
      name: control !== null ? CONTROL_RECORD_NAMES[control.type] : 'STP_MESSAGE',
      targetTs,
      stp: { master, channel },
      fields,
      text: messageText(
        master,
        channel,
        closingTs,
        control !== null ? `${closed} ${control.type}` : closed,
        buffer,
        length,
      ),
      raw,
    });
  }

  exception(code: ExceptionCode, master: number, channel: number, data: Uint8Array, at: number): void {
    if (this.eventOut !== null) {
      this.eventOut.text(JSON.stringify(exceptionEvent(code, master, channel, data, at)));
      this.eventWritten();
    }
    if (this.emitRecord === null) return;
    const name = EXCEPTION_NAMES[code];
    const timestamp = outputTimestamp(TimestampFlag.FIDO, this.outNs());
    this.record({
      kind: 'error',
      type: code,
      name,
      targetTs: null,
      stp: { master, channel },
      fields: { code, data: bytesToHex(data), length: data.length },
      text: messageText(master, channel, null, name, data),
      raw: encodePhonetException({
        sender: this.port,
        transaction: this.nextTransaction(),
        master: master & 0xff,
        channel: channel & 0xff,
        timestamp,
        code,
        data,
      }),
    });
  }

  marker(code: MarkerCode, params: Uint8Array, at: number): void {
    this.emitMarker(code, params, NO_BYTES, this.port, this.outNs(), at, null);
  }

  /** Any marker: error markers (sender = the port, no comment), user and timebase markers (sender 0x01). */
  private emitMarker(
    code: MarkerCode,
    params: Uint8Array,
    comment: Uint8Array,
    sender: number,
    timeNs: bigint,
    at: number,
    commentText: string | null,
  ): void {
    if (this.eventOut !== null) {
      this.eventOut.text(JSON.stringify(markerEvent(code, params, at)));
      this.eventWritten();
    }
    const index = ++this.markerIndex;
    if (this.emitRecord === null) return;
    const timestamp = outputTimestamp(TimestampFlag.FIDO, timeNs);
    const marker = { type: code, sender, timestamp, index, params, comment };
    const meaning = MARKER_NAMES[code];
    const fields: Record<string, unknown> = {
      code,
      marker: meaning,
      index,
      params: bytesToHex(params),
      atNibble: at,
      timestamp: timestamp.toString(),
    };
    if (commentText !== null) fields.comment = commentText;
    this.record({
      kind: 'marker',
      type: code,
      name: `STP_MARKER_${code.toString(16).padStart(2, '0').toUpperCase()}`,
      targetTs: null,
      fields,
      text: `marker 0x${code.toString(16).padStart(2, '0')} ${meaning} #${index}${
        params.length > 0 ? ` params ${dataText(params)}` : ''
      }${commentText !== null ? ` ${JSON.stringify(commentText)}` : ''}`,
      raw:
        this.output === 'ost'
          ? encodeOstMarker(marker)
          : encodePhonetMarker({ ...marker, transaction: this.nextTransaction() }),
    });
  }

  /**
   * The device clock's mapping onto output time changed (VERSION gave a new timestamp format):
   * the trace box says so with two timebase markers, the output time before the change
   * ("Old timestamp!") and after it ("New timestamp!").
   */
  private timebaseChanged(oldNs: bigint, newNs: bigint): void {
    const at = this.parser.pos;
    this.emitMarker(MarkerCode.TIMEBASE_CHANGED, NO_BYTES, OLD_TIMESTAMP, SENDER_MAIN, oldNs, at, 'Old timestamp!');
    this.emitMarker(MarkerCode.TIMEBASE_CHANGED, NO_BYTES, NEW_TIMESTAMP, SENDER_MAIN, newNs, at, 'New timestamp!');
  }

  discardedMessage(master: number, channel: number, length: number, at: number): void {
    this.errorRecord(
      'STP_MESSAGE_DISCARDED',
      { master, channel },
      { length, atNibble: at },
      `M${master.toString(16).padStart(4, '0')} C${channel.toString(16).padStart(4, '0')} unfinished message of ${length} bytes discarded`,
    );
  }

  discardedNibbles(count: number, at: number): void {
    this.counts.discardedNibbles += count;
    this.errorRecord(
      'STP_NIBBLES_DISCARDED',
      null,
      { nibbles: count, atNibble: at },
      `${count} nibbles skipped before synchronisation`,
    );
  }

  deviceTimestamp(hi: number, lo: number, fixed: boolean): void {
    if (fixed) return;
    if (this.clockBaseHostNs === null) {
      this.clockBaseHostNs = this.hostNs;
      this.clockBaseDeviceTs = toBigInt64(hi, lo);
    }
    this.lastTsHi = hi;
    this.lastTsLo = lo;
  }

  timestampFormat(version: number): void {
    const previous = this.tsVersion;
    this.tsVersion = version;
    if (version === previous || this.clockBaseHostNs === null) return;
    // A new timestamp format restarts the device clock: it is anchored again at its next timestamp.
    const oldNs = this.deviceTimeNs(toBigInt64(this.lastTsHi, this.lastTsLo));
    this.clockBaseHostNs = null;
    this.lastTsHi = 0;
    this.lastTsLo = 0;
    this.timebaseChanged(oldNs, this.outNs());
  }

  frequency(hz: number): void {
    const current = this.frequencyHz > 0 ? this.frequencyHz : this.tickHz;
    if (hz <= 0 || hz === this.frequencyHz) return;
    if (this.clockBaseHostNs === null || current === 0 || hz === current) {
      this.frequencyHz = hz;
      return;
    }
    // A new rate: the time so far stays, later device ticks count at the new rate. The output
    // time runs on without a jump, so this is no timebase change (the reference gives no marker).
    const last = toBigInt64(this.lastTsHi, this.lastTsLo);
    this.clockBaseHostNs = this.deviceTimeNs(last) - this.timeOffsetNs;
    this.clockBaseDeviceTs = last;
    this.frequencyHz = hz;
  }

  // --- helpers ------------------------------------------------------------------------------

  /** An event line is written: end it, or read it back for `onEvent` (then it is all the buffer holds). */
  private eventWritten(): void {
    if (this.onEvent === null) this.eventOut!.newline();
    else this.onEvent(JSON.parse(this.eventOut!.takeText()) as StpEvent);
  }

  /** Host time of a device timestamp: the host clock at the first one plus the device delta. */
  private deviceTimeNs(ts: bigint): bigint {
    const baseHost = (this.clockBaseHostNs ?? this.hostNs) + this.timeOffsetNs;
    const delta = ts - this.clockBaseDeviceTs;
    const hz = this.frequencyHz > 0 ? this.frequencyHz : this.tickHz;
    const ns = hz > 0 ? baseHost + (delta * NS_PER_S) / BigInt(hz) : baseHost + delta;
    return ns < 0n ? 0n : ns;
  }

  private nextTransaction(): number {
    const t = this.transaction;
    this.transaction = (t + 1) & 0xff;
    return t;
  }

  private errorRecord(
    name: string,
    stp: { master: number; channel: number } | null,
    fields: Record<string, unknown>,
    text: string,
  ): void {
    if (this.emitRecord === null) return;
    const record: DecodedRecord = { kind: 'error', type: 0, name, targetTs: null, fields, text, raw: NO_BYTES };
    if (stp !== null) record.stp = stp;
    this.record(record);
  }

  private record(record: DecodedRecord): void {
    this.counts.records++;
    this.emitRecord!(record);
  }
}

function callbacksOf(o: StpDecoderOptions): StpDecoderOptions {
  const out: StpDecoderOptions = {};
  if (o.onPacket) out.onPacket = o.onPacket;
  if (o.onEvent) out.onEvent = o.onEvent;
  if (o.eventLines) out.eventLines = o.eventLines;
  if (o.records !== undefined) out.records = o.records;
  return out;
}

export { ClosedBy };
