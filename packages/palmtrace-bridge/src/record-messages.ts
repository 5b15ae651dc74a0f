import { type Protocol, type TraceRecord, targetTimeOf } from '@tracehub/contracts';
import { admitsLink, matchesRecord } from '@tracehub/live';
import {
  encodeTraceMessage,
  PalmErrorClass,
  type PalmTextEncoding,
  splitTraceLines,
  TraceKind,
} from '@tracehub/palmtrace';
import { qsRecordGroup } from '@tracehub/qs';
import type { ReporterOptions } from './endpoint-schema.js';
import type { LinkPalmIdsOf } from './link-palm-ids.js';

/**
 * Target clock ticks per millisecond when an endpoint does not say. QS: the fixtures' POSIX
 * ports count CLOCK_MONOTONIC in 100 ns units (10 000 per ms). STP: the device clock of the
 * captures runs at 19.2 MHz (its FREQ packet). SWD records carry no target time.
 */
export const DEFAULT_TICKS_PER_MS: Readonly<Record<Protocol, number>> = Object.freeze({
  qs: 10_000,
  stp: 19_200,
  swd: 1,
});

/** Cap on one record's Trace Data (spec §4.3: cap at 64 KiB and mark the cut). */
const MAX_DATA_BYTES = 65_536;

/** A record's messages as they go on the wire: usually one, one per line for multi-line text. */
export type RecordMessages = Uint8Array | Uint8Array[];

/**
 * Process ID of a rig: the number `rigNumbers` gives it, else the digits its name ends with
 * (`rig7` → 7, `bench-012` → 12, low 32 bits), else a 32-bit FNV-1a hash of the name, so a
 * rig without digits still shows as one stable source.
 */
export function rigNumber(rig: string, rigNumbers?: Readonly<Record<string, number>>): number {
  const configured = rigNumbers?.[rig];
  if (configured !== undefined) return configured;
  const digits = /([0-9]+)$/.exec(rig);
  if (digits) return Number(BigInt.asUintN(32, BigInt(digits[1])));
  let hash = 0x811c9dc5;
  for (let i = 0; i < rig.length; i++) {
    hash ^= rig.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Thread ID: the QS active-object priority, or STP `master << 16 | channel`; none otherwise. */
export function threadIdOf(record: TraceRecord): number | undefined {
  if (record.stp) return ((record.stp.master << 16) | record.stp.channel) >>> 0;
  return record.qs?.prio;
}

/**
 * Time stamp in ms: the record's target time (its stamps unwrapped across counter wraps, so a
 * 2- or 4-byte stamp's wrap does not send the time back) divided by ticks per ms (floor); the
 * encoder sends the low 32 bits. Records without a target time get no Time stamp.
 */
export function timestampMsOf(record: TraceRecord, ticksPerMs: number): bigint | undefined {
  const time = targetTimeOf(record);
  if (time === undefined) return undefined;
  const ticks = BigInt(time);
  if (Number.isInteger(ticksPerMs)) return ticks / BigInt(ticksPerMs);
  return BigInt(Math.floor(Number(ticks) / ticksPerMs));
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/**
 * Turns records into PalmTrace messages with one endpoint's options: one kind-1 message per
 * text line (Attributes, Process ID, Thread ID, Time stamp, Trace Data), or one kind-2 message
 * with an STP payload's bytes when `binaryStp` is on. Records with empty text send nothing.
 */
export class RecordMessageEncoder {
  private readonly encoding: PalmTextEncoding;
  private readonly defaultModule: number;
  private readonly ticksPerMs: Partial<Record<Protocol, number>>;

  constructor(
    private readonly options: ReporterOptions = {},
    /** The PalmTrace ids the links' own settings give (`palmProcessId`, `palmModule`). */
    private readonly linkIds: LinkPalmIdsOf = () => undefined,
  ) {
    this.encoding = options.encoding ?? 'windows-1252';
    this.defaultModule = options.modules?.default ?? PalmErrorClass.appErrorClass;
    this.ticksPerMs = { ...options.targetTicksPerMs };
  }

  matches(record: TraceRecord): boolean {
    return matchesRecord(this.options.filter, record);
  }

  admitsLink(link: { protocol: string; rig: string; link: string }): boolean {
    return admitsLink(this.options.filter, link);
  }

  /**
   * The module of a record: the first of this endpoint's tables that names it, else the one
   * its link's settings give, else the endpoint's default.
   */
  moduleOf(record: TraceRecord): number {
    const m = this.options.modules;
    const fallback = () => this.linkIds(record.rig, record.link)?.module ?? this.defaultModule;
    if (!m) return fallback();
    const byName = m.names?.[record.name];
    if (byName !== undefined) return byName;
    if (record.protocol === 'qs') {
      const byGroup = m.qsGroups?.[qsRecordGroup(record)];
      if (byGroup !== undefined) return byGroup;
    } else if (record.stp) {
      const byMaster = m.stpMasters?.[String(record.stp.master)];
      if (byMaster !== undefined) return byMaster;
    }
    return fallback();
  }

  /** Process ID: this endpoint's number for the rig, else the link's setting, else the rig's own number. */
  processIdOf(record: TraceRecord): number {
    return (
      this.options.rigNumbers?.[record.rig] ?? this.linkIds(record.rig, record.link)?.processId ?? rigNumber(record.rig)
    );
  }

  /**
   * Ticks per ms of a record's target time: this endpoint's for the protocol, else its link's
   * tick rate (the `tickRate` setting, which the api's target-time views read too), else the
   * protocol's default.
   */
  ticksPerMsOf(record: TraceRecord): number {
    const rate = this.linkIds(record.rig, record.link)?.tickRate;
    return (
      this.ticksPerMs[record.protocol] ?? (rate === undefined ? DEFAULT_TICKS_PER_MS[record.protocol] : rate / 1000)
    );
  }

  /** The record's messages, or undefined when it sends nothing (empty text). */
  encode(record: TraceRecord): RecordMessages | undefined {
    const common = {
      module: this.moduleOf(record),
      processId: this.processIdOf(record),
      threadId: threadIdOf(record),
      timestampMs: timestampMsOf(record, this.ticksPerMsOf(record)),
      maxDataBytes: MAX_DATA_BYTES,
    };
    if (this.options.binaryStp && record.protocol !== 'qs' && record.kind === 'record') {
      const data = record.fields.data;
      if (typeof data === 'string' && data.length > 0 && HEX.test(data)) {
        return encodeTraceMessage({ ...common, kind: TraceKind.Binary, bytes: Buffer.from(data, 'hex') });
      }
    }
    if (record.text === '') return undefined;
    if (!record.text.includes('\n') && !record.text.includes('\r')) {
      return encodeTraceMessage({ ...common, kind: TraceKind.TextLine, text: record.text, encoding: this.encoding });
    }
    return splitTraceLines(record.text).map((line) =>
      encodeTraceMessage({ ...common, kind: TraceKind.TextLine, text: line, encoding: this.encoding }),
    );
  }

  /** The one text message that tells the Reporter how many records it missed. */
  droppedNotice(dropped: number, why: string): Uint8Array {
    return this.notice(`${dropped} record${dropped === 1 ? '' : 's'} dropped (${why})`);
  }

  /** A text line from tracehub itself to the Reporter: `tracehub: <text>`. */
  notice(text: string): Uint8Array {
    return encodeTraceMessage({
      module: this.defaultModule,
      kind: TraceKind.TextLine,
      text: `tracehub: ${text}`,
      encoding: this.encoding,
    });
  }
}
