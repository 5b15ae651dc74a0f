import type { ChunkContext, DecodedRecord, EmitRecord, JsonValue, TraceDecoder } from '@tracehub/contracts';
import { DEFAULT_TRACEBOX_PORT, OST_PROTOCOL_WRAPPER, TimestampFlag } from './constants.js';
import { bytesToHex } from './hex.js';
import { encodeOstSwd } from './ost.js';
import { encodePhonetSwd } from './phonet.js';
import type { OutputProtocol } from './reassembler.js';
import { SwdDeframer, type SwdSink, type SwdViolation } from './swd-deframer.js';
import { dataText } from './text.js';
import { outputTimestamp } from './timestamp.js';

export interface SwdDecoderOptions {
  /** Output protocol of the wrapper messages (default 'ost'). */
  output?: OutputProtocol;
  /** Tracebox port / PhoNet sender object (default 0x0B). */
  port?: number;
  /** Processor index written in the wrapper, 0..255 (one byte; default 0). */
  processor?: number;
  /** Largest SWD message; longer frames are truncated to it (default: what fits a 0xFFFF output message). */
  maxMessageBytes?: number;
}

/** Largest SWD data in one output message: 0xFFFF less the OST (8 + 3) or PhoNet (12) wrapper header. */
export const SWD_OST_MAX_DATA = 0xffff - 11;
export const SWD_PHONET_MAX_DATA = 0xffff - 12;

function byteOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > 0xff) {
    throw new RangeError(`SWD ${name} must be an integer 0..255 (one byte of the wrapper), not ${value}`);
  }
  return value;
}

const NO_BYTES = new Uint8Array(0);

/**
 * Decoder of the `swd` input protocol: SWD reverse-channel frames become OST (0x99) or PhoNet
 * wrapper messages of type 0x01; framing violations and stray bytes become `error` records.
 */
export class SwdDecoder implements TraceDecoder, SwdSink {
  private readonly deframer: SwdDeframer;
  private readonly output: OutputProtocol;
  private readonly port: number;
  private readonly processor: number;
  private emitRecord: EmitRecord | null = null;
  private hostNs = 0n;
  private transaction = 0;
  private records = 0;

  constructor(private readonly options: SwdDecoderOptions = {}) {
    this.output = options.output ?? 'ost';
    this.port = byteOption('port', options.port, DEFAULT_TRACEBOX_PORT);
    this.processor = byteOption('processor', options.processor, 0);
    const limit = this.output === 'ost' ? SWD_OST_MAX_DATA : SWD_PHONET_MAX_DATA;
    this.deframer = new SwdDeframer(this, Math.min(options.maxMessageBytes ?? limit, limit));
  }

  push(chunk: Uint8Array, ctx: ChunkContext, emit: EmitRecord): void {
    this.emitRecord = emit;
    this.hostNs = ctx.hostNs;
    if (ctx.lostBytes !== undefined && ctx.lostBytes > 0) {
      // Bytes of this frame were lost: it cannot be delivered whole.
      if (this.deframer.inFrame) this.deframer.end('lost_input');
      // And the loss itself, wherever it fell: the trace box output tells its clients (0x26).
      this.record({
        kind: 'error',
        type: 0,
        name: 'SWD_INPUT_LOST',
        targetTs: null,
        fields: { lostBytes: ctx.lostBytes },
        text: `${ctx.lostBytes} bytes lost before this chunk`,
        raw: NO_BYTES,
      });
    }
    this.deframer.push(chunk);
    this.emitRecord = null;
  }

  end(ctx: ChunkContext, emit: EmitRecord): void {
    this.emitRecord = emit;
    this.hostNs = ctx.hostNs;
    this.deframer.end();
    this.emitRecord = null;
  }

  snapshot(): JsonValue {
    return {
      options: { ...this.options } as JsonValue,
      deframer: this.deframer.snapshot() as JsonValue,
      transaction: this.transaction,
      records: this.records,
      hostNs: this.hostNs.toString(),
    };
  }

  static restore(snapshot: JsonValue, options: SwdDecoderOptions = {}): SwdDecoder {
    const s = snapshot as Record<string, JsonValue>;
    const decoder = new SwdDecoder({ ...(s.options as SwdDecoderOptions), ...options });
    decoder.deframer.restore(s.deframer as Record<string, unknown>);
    decoder.transaction = s.transaction as number;
    decoder.records = s.records as number;
    decoder.hostNs = BigInt(s.hostNs as string);
    return decoder;
  }

  stats(): Record<string, number> {
    return { ...this.deframer.counters, records: this.records };
  }

  message(data: Uint8Array, receivedBytes: number): void {
    const raw =
      this.output === 'ost'
        ? encodeOstSwd({ port: this.port, processor: this.processor, data })
        : encodePhonetSwd({ sender: this.port, transaction: this.nextTransaction(), processor: this.processor, data });
    const truncated = receivedBytes > data.length;
    const fields = {
      data: bytesToHex(data),
      length: data.length,
      processor: this.processor,
      timestamp: outputTimestamp(TimestampFlag.FIDO, this.hostNs).toString(),
    };
    this.record({
      kind: 'record',
      type: OST_PROTOCOL_WRAPPER,
      name: 'SWD_MESSAGE',
      targetTs: null,
      fields: truncated ? { ...fields, truncatedFrom: receivedBytes } : fields,
      text: `SWD [${data.length}] ${dataText(data)}${truncated ? ` (truncated from ${receivedBytes} bytes)` : ''}`,
      raw,
    });
  }

  violation(reason: SwdViolation, droppedBytes: number): void {
    this.record({
      kind: 'error',
      type: 0,
      name: 'SWD_FRAME_VIOLATION',
      targetTs: null,
      fields: { reason, droppedBytes },
      text: `SWD frame dropped (${reason}), ${droppedBytes} bytes`,
      raw: NO_BYTES,
    });
  }

  skipped(count: number): void {
    this.record({
      kind: 'error',
      type: 0,
      name: 'SWD_BYTES_SKIPPED',
      targetTs: null,
      fields: { bytes: count },
      text: `SWD ${count} bytes outside any frame skipped`,
      raw: NO_BYTES,
    });
  }

  private nextTransaction(): number {
    const t = this.transaction;
    this.transaction = (t + 1) & 0xff;
    return t;
  }

  private record(r: DecodedRecord): void {
    this.records++;
    this.emitRecord?.(r);
  }
}
