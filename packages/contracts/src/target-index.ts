import { targetTimeOf } from './decoded-record.js';
import type { BatchRecord, TraceRecord } from './record.js';

/**
 * Where the records of a run lie on the target's clock, in the form a stored block's summary
 * keeps it: per record, in seq order, its lane (the timeline track), whether it is an error,
 * and its target segment and time (ticks). Views on target time count a block's records per
 * lane and time slice from this alone, without decoding the block: exact counts at any zoom.
 *
 * `index` is base64 of one entry per record: a varint `lane << 3 | flags` (1: error, 2: a
 * segment and an absolute time follow, 4: no target time), then for a timed record either
 * varint segment and varint time (flag 2: the first timed record, a new segment, or a time
 * that went back) or the varint time since the previous timed record.
 */
export interface TargetIndex {
  /** Lanes the entries name, by position; null is the link itself. */
  lanes: Array<string | null>;
  /** Segments of the first and last timed records (null: no record has a target time). */
  firstSegment: number | null;
  lastSegment: number | null;
  /** Least and greatest target time (ticks, decimal) of the timed records, whatever their segment. */
  minTime: string | null;
  maxTime: string | null;
  /** Records without a target time. */
  untimed: number;
  index: string;
}

/** The track a record belongs to on a timeline: QS active object, STP master/channel, or null (the link). */
export function trackOf(r: BatchRecord & { protocol?: TraceRecord['protocol'] }): string | null {
  // A record of a batch does not say its protocol: only a QS record has these names.
  if (r.protocol !== 'stp') {
    if (r.name.startsWith('QS_QEP_') || r.name.startsWith('QS_QF_ACTIVE_')) return r.qs?.obj ?? null;
    if (r.name.startsWith('QS_QF_TIMEEVT_')) {
      const ao = r.fields.ao;
      return ao === undefined || ao === null ? null : String(ao);
    }
  }
  if (r.stp) return `master ${r.stp.master} / channel ${r.stp.channel}`;
  return null;
}

/** One record as the index keeps it. */
export interface TargetEntry {
  lane: number;
  error: boolean;
  /** -1: no target time. */
  segment: number;
  /** Ticks (0 when untimed). */
  time: bigint;
}

const ERROR = 1;
const ABSOLUTE = 2;
const UNTIMED = 4;

class Bytes {
  buf: Uint8Array;
  length = 0;
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }
  push(b: number): void {
    if (this.length === this.buf.length) {
      const grown = new Uint8Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf[this.length++] = b;
  }
  varint(v: number | bigint): void {
    if (typeof v === 'number' && v <= Number.MAX_SAFE_INTEGER) {
      while (v >= 0x80) {
        this.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
      }
      this.push(v);
      return;
    }
    let b = BigInt(v);
    while (b >= 0x80n) {
      this.push(Number(b & 0x7fn) | 0x80);
      b >>= 7n;
    }
    this.push(Number(b));
  }
}

/** The lanes an index names, by position: each track numbered in the order first seen. */
class LaneList {
  readonly lanes: Array<string | null>;
  private readonly numbers: Map<string | null, number>;
  constructor(lanes: Array<string | null> = []) {
    this.lanes = [...lanes];
    this.numbers = new Map(this.lanes.map((l, i) => [l, i]));
  }
  numberOf(track: string | null): number {
    let lane = this.numbers.get(track);
    if (lane === undefined) {
      lane = this.lanes.length;
      this.lanes.push(track);
      this.numbers.set(track, lane);
    }
    return lane;
  }
}

/** Reads an index's varints as doubles (exact below 2^53), from `at`. */
class IndexReader {
  at = 0;
  constructor(private readonly bytes: Uint8Array) {}
  number(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.bytes[this.at++];
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
  }
}

/** Builds an index from entries in seq order. */
export function encodeTargetIndex(lanes: Array<string | null>, entries: Iterable<TargetEntry>): TargetIndex {
  const out = new Bytes();
  let prevSegment = -1;
  let prev = 0n;
  let min: bigint | null = null;
  let max: bigint | null = null;
  let firstSegment: number | null = null;
  let lastSegment: number | null = null;
  let untimed = 0;
  for (const e of entries) {
    const head = e.lane * 8 + (e.error ? ERROR : 0);
    if (e.segment < 0) {
      untimed++;
      out.varint(head + UNTIMED);
      continue;
    }
    if (e.segment !== prevSegment || e.time < prev) {
      out.varint(head + ABSOLUTE);
      out.varint(e.segment);
      out.varint(e.time);
    } else {
      out.varint(head);
      const delta = e.time - prev;
      out.varint(delta <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(delta) : delta);
    }
    prevSegment = e.segment;
    prev = e.time;
    firstSegment ??= e.segment;
    lastSegment = e.segment;
    if (min === null || e.time < min) min = e.time;
    if (max === null || e.time > max) max = e.time;
  }
  return {
    lanes,
    firstSegment,
    lastSegment,
    minTime: min === null ? null : min.toString(),
    maxTime: max === null ? null : max.toString(),
    untimed,
    index: Buffer.from(out.buf.buffer, 0, out.length).toString('base64'),
  };
}

/** The entries of an index's bytes, in seq order. */
export function* targetEntries(bytes: Uint8Array): Generator<TargetEntry> {
  let i = 0;
  const varint = (): bigint | number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = bytes[i++];
      v += (b & 0x7f) * scale;
      if (b < 0x80) break;
      scale *= 0x80;
      if (scale >= 2 ** 42) {
        // Near what a double holds exactly: go on in bigint.
        let big = BigInt(v);
        let shift = BigInt(Math.log2(scale));
        for (;;) {
          const c = bytes[i++];
          big += BigInt(c & 0x7f) << shift;
          if (c < 0x80) return big;
          shift += 7n;
        }
      }
    }
    return v;
  };
  let segment = -1;
  let time = 0n;
  while (i < bytes.length) {
    const head = Number(varint());
    const flags = head & 7;
    const lane = (head - flags) / 8;
    const error = (flags & ERROR) !== 0;
    if (flags & UNTIMED) {
      yield { lane, error, segment: -1, time: 0n };
      continue;
    }
    if (flags & ABSOLUTE) {
      segment = Number(varint());
      time = BigInt(varint());
    } else {
      time += BigInt(varint());
    }
    yield { lane, error, segment, time };
  }
}

/** A record's target entry, its lane given. */
export function targetEntryOf(r: BatchRecord, lane: number): TargetEntry {
  const ticks = targetTimeOf(r);
  return ticks === undefined
    ? { lane, error: r.kind === 'error', segment: -1, time: 0n }
    : { lane, error: r.kind === 'error', segment: r.targetSegment ?? 0, time: BigInt(ticks) };
}

/**
 * The target index of records of one session, in seq order. The decoder makes one for every
 * message it publishes: written straight from the records in doubles while every time has at
 * most 15 digits (exact), through `TargetEntry`s and bigints otherwise.
 */
export function targetIndexOf(records: readonly BatchRecord[]): TargetIndex {
  const lanes = new LaneList();
  const out = new Bytes(records.length * 4 + 16);
  let prevSegment = -1;
  let prev = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let firstSegment: number | null = null;
  let lastSegment: number | null = null;
  let untimed = 0;
  // An STP record's lane by master and channel as one number: its track's text is made once
  // a channel, not once a record (360 -> 150 ns a record of coresight_stm_only).
  const channelLanes = new Map<number, number>();
  for (const r of records) {
    let lane: number;
    const stp = r.stp;
    if (stp && !r.name.startsWith('QS_')) {
      const channel = stp.master * 65536 + stp.channel;
      let known = channelLanes.get(channel);
      if (known === undefined) channelLanes.set(channel, (known = lanes.numberOf(trackOf(r))));
      lane = known;
    } else lane = lanes.numberOf(trackOf(r));
    const head = lane * 8 + (r.kind === 'error' ? ERROR : 0);
    const ticks = targetTimeOf(r);
    if (ticks === undefined) {
      untimed++;
      out.varint(head + UNTIMED);
      continue;
    }
    if (ticks.length > 15) return targetIndexOfEntries(records);
    const time = Number(ticks);
    const segment = r.targetSegment ?? 0;
    if (segment !== prevSegment || time < prev) {
      out.varint(head + ABSOLUTE);
      out.varint(segment);
      out.varint(time);
    } else {
      out.varint(head);
      out.varint(time - prev);
    }
    prevSegment = segment;
    prev = time;
    firstSegment ??= segment;
    lastSegment = segment;
    if (time < min) min = time;
    if (time > max) max = time;
  }
  return {
    lanes: lanes.lanes,
    firstSegment,
    lastSegment,
    minTime: firstSegment === null ? null : String(min),
    maxTime: firstSegment === null ? null : String(max),
    untimed,
    index: Buffer.from(out.buf.buffer, out.buf.byteOffset, out.length).toString('base64'),
  };
}

/** `targetIndexOf` for times of any size. */
function targetIndexOfEntries(records: readonly BatchRecord[]): TargetIndex {
  const lanes = new LaneList();
  const entries: TargetEntry[] = [];
  for (const r of records) {
    const lane = lanes.numberOf(trackOf(r));
    entries.push(targetEntryOf(r, lane));
  }
  return encodeTargetIndex(lanes.lanes, entries);
}

/**
 * The index of two runs, `a` before `b` in seq order. An index's first timed entry is always
 * absolute, so `b`'s entries follow `a`'s as they are: only their lanes are renumbered into the
 * merged lane list, byte by byte, without decoding a time (storage merges the index of every
 * message it puts in a block).
 */
export function mergeTargetIndexes(a: TargetIndex, b: TargetIndex): TargetIndex {
  const lanes = new LaneList(a.lanes);
  const remap = b.lanes.map((l) => lanes.numberOf(l));
  const aBytes = Buffer.from(a.index, 'base64');
  const bBytes = Buffer.from(b.index, 'base64');
  const out = new Bytes(aBytes.length + bBytes.length + 16);
  out.buf.set(aBytes);
  out.length = aBytes.length;
  const reader = new IndexReader(bBytes);
  const copyVarint = () => {
    for (;;) {
      const byte = bBytes[reader.at++];
      out.push(byte);
      if (byte < 0x80) return;
    }
  };
  while (reader.at < bBytes.length) {
    const head = reader.number();
    const flags = head & 7;
    out.varint(remap[(head - flags) / 8] * 8 + flags);
    if (flags & UNTIMED) continue;
    if (flags & ABSOLUTE) copyVarint(); // the segment
    copyVarint(); // the time, or the time since the previous timed entry
  }
  const least = (x: string | null, y: string | null) => (x === null ? y : y === null || BigInt(x) <= BigInt(y) ? x : y);
  const greatest = (x: string | null, y: string | null) =>
    x === null ? y : y === null || BigInt(x) >= BigInt(y) ? x : y;
  return {
    lanes: lanes.lanes,
    firstSegment: a.firstSegment ?? b.firstSegment,
    lastSegment: b.lastSegment ?? a.lastSegment,
    minTime: least(a.minTime, b.minTime),
    maxTime: greatest(a.maxTime, b.maxTime),
    untimed: a.untimed + b.untimed,
    index: Buffer.from(out.buf.buffer, out.buf.byteOffset, out.length).toString('base64'),
  };
}

/**
 * Visits an index's entries as numbers (times past 2^53 ticks lose their last digits: 28 years
 * at 10 MHz), faster than `targetEntries` for views that count millions. `segment` is -1 for a
 * record without a target time. Returns the number of entries.
 */
export function visitTargetIndex(
  bytes: Uint8Array,
  visit: (lane: number, error: boolean, segment: number, time: number) => void,
): number {
  const reader = new IndexReader(bytes);
  let n = 0;
  let segment = -1;
  let time = 0;
  while (reader.at < bytes.length) {
    const head = reader.number();
    const flags = head & 7;
    const lane = (head - flags) / 8;
    n++;
    if (flags & UNTIMED) {
      visit(lane, (flags & ERROR) !== 0, -1, 0);
      continue;
    }
    if (flags & ABSOLUTE) {
      segment = reader.number();
      time = reader.number();
    } else {
      time += reader.number();
    }
    visit(lane, (flags & ERROR) !== 0, segment, time);
  }
  return n;
}
