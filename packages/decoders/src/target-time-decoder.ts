import {
  type ChunkContext,
  type DecodedRecord,
  type EmitRecord,
  type JsonValue,
  type LinkMarker,
  TargetClock,
  type TargetClockState,
  type TraceDecoder,
} from '@tracehub/contracts';

/** What in a protocol's records moves its target clock: resets and the counter's width. */
export interface TargetClockRule {
  /** The counter's width in bits before a record says otherwise. */
  bits: number;
  /** Reads a record for what it says of the clock (a target reset, a timestamp size), before its time is taken. */
  observe(record: DecodedRecord, clock: TargetClock): void;
}

/** QS: a target info (or before QS 5.5 a QS_EMPTY) with the reset flag is a reset; a target info gives the timestamp size. */
export function qsTargetClockRule(timeSize: number): TargetClockRule {
  return {
    bits: timeSize * 8,
    observe(record, clock) {
      if (record.kind !== 'info') return;
      if (record.fields.reset === true) clock.reset();
      const size = record.fields.timeSize;
      if (record.name === 'QS_TARGET_INFO' && typeof size === 'number') clock.setWidth(size * 8);
    },
  };
}

/** STP: STM timestamps as the decoder gives them, 64 bits wide (no wrap, no reset in the stream). */
export const STP_TARGET_CLOCK_RULE: TargetClockRule = { bits: 64, observe() {} };

/**
 * A codec with the target time added to the records it emits (`targetTime`, `targetSegment`,
 * from `TargetClock`). Computed here, as records are decoded in order, rather than in storage
 * or at query time: only the decoder sees every record of a session in order, with the state
 * before it (its snapshot carries the clock), so a time is computed once per record and a
 * reader of any stretch of a session gets it without reading what came before.
 */
export class TargetTimeDecoder implements TraceDecoder {
  readonly usesPauses?: boolean;
  /** The codec's markers (a live link's), timed as its records are; absent when the codec keeps none. */
  readonly mark?: (marker: LinkMarker, ctx: ChunkContext, emit: EmitRecord) => void;
  private emitTo: EmitRecord = () => {};
  private readonly emitTimed: EmitRecord = (record) => {
    this.rule.observe(record, this.clock);
    record.targetTime = this.clock.timeOf(record.targetTs);
    record.targetSegment = this.clock.segment;
    this.emitTo(record);
  };

  constructor(
    private readonly codec: TraceDecoder,
    private readonly rule: TargetClockRule,
    private readonly clock: TargetClock = new TargetClock(rule.bits),
  ) {
    if (codec.usesPauses !== undefined) this.usesPauses = codec.usesPauses;
    const mark = codec.mark?.bind(codec);
    if (mark)
      this.mark = (marker, ctx, emit) => {
        this.emitTo = emit;
        mark(marker, ctx, this.emitTimed);
      };
  }

  push(chunk: Uint8Array, ctx: ChunkContext, emit: EmitRecord): void {
    this.emitTo = emit;
    this.codec.push(chunk, ctx, this.emitTimed);
  }

  end(ctx: ChunkContext, emit: EmitRecord): void {
    this.emitTo = emit;
    this.codec.end(ctx, this.emitTimed);
  }

  snapshot(): JsonValue {
    return { codec: this.codec.snapshot(), targetClock: this.clock.toJSON() };
  }

  stats(): Record<string, number> {
    return this.codec.stats();
  }

  /**
   * Restores `snapshot` with `restoreCodec` for the codec's part. A snapshot of the codec alone
   * (a checkpoint written before target times were kept) restores with a fresh clock.
   */
  static restore(
    snapshot: JsonValue,
    rule: TargetClockRule,
    restoreCodec: (codecSnapshot: JsonValue) => TraceDecoder,
  ): TargetTimeDecoder {
    const timed = timedSnapshot(snapshot);
    if (!timed) return new TargetTimeDecoder(restoreCodec(snapshot), rule);
    return new TargetTimeDecoder(restoreCodec(timed.codec), rule, TargetClock.fromJSON(timed.targetClock));
  }

  /** The codec's own part of a snapshot (all of it, when written before target times were kept). */
  static codecSnapshot(snapshot: JsonValue): JsonValue {
    return timedSnapshot(snapshot)?.codec ?? snapshot;
  }
}

function timedSnapshot(snapshot: JsonValue): { codec: JsonValue; targetClock: TargetClockState } | undefined {
  if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) return undefined;
  if (!('targetClock' in snapshot) || !('codec' in snapshot)) return undefined;
  return snapshot as unknown as { codec: JsonValue; targetClock: TargetClockState };
}
