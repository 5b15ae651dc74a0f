import type { DecodedRecord, JsonValue } from '@tracehub/contracts';
import { encodeFrame, QsDecoder, QsRecordId, type QsTargetConfig } from '@tracehub/qs';
import { NameIndex } from './name-index.js';

/** Bytes kept back at most before they are skimmed (while nobody wants every record). */
const SKIM_BATCH_BYTES = 64 * 1024;

/** qspy's QS-RX encode buffer: no frame longer than this is ever written to a target. */
export const MAX_RX_FRAME_BYTES = 512;

/** A QS-RX frame written to the target. */
export interface SentFrame {
  /** The QS-RX sequence number it carries. */
  seq: number;
  /** The QS-RX record id. */
  id: number;
  /** The bytes written (stuffed, checksum, closing flag). */
  frame: Uint8Array;
}

/** Why a frame was not written. */
export type SendFailure =
  | { reason: 'no-target'; id: number; length: number }
  | { reason: 'too-long'; id: number; length: number };

export type TargetRecordListener = (record: DecodedRecord) => void;
export type SentFrameListener = (frame: SentFrame) => void;

export interface QsTargetLinkOptions {
  /** Writes a QS-RX frame to the target. Must not block: the caller never waits for it. */
  write(frame: Uint8Array): void;
}

/**
 * The target side of a QS link as qspy keeps it (front-end spec, Appendix B): the record
 * stream decoded with the QS codec, the target's configuration from its latest target info,
 * the dictionaries read backwards for name lookups, the QS-RX sequence counter shared by every
 * sender of commands, and the signal scope. Pure: bytes in, records and frames out.
 */
export class QsTargetLink {
  private readonly nameIndex = new NameIndex();
  /**
   * Bytes not yet looked at while nobody wants every record: skimmed together when a command,
   * a name or the configuration is asked for, or when they reach SKIM_BATCH_BYTES. A slow
   * link reads a few hundred bytes at a time, a hundred times a second; skimming each read
   * cost a fleet's gateway more than all its other work.
   */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /**
   * Made when the link's first bytes come (or its configuration is asked for): a link that
   * is connected but sends nothing costs its gateway no decoder (12 kB of heap).
   */
  private decoderOrNone: QsDecoder | undefined;
  private rxSeq = 0;
  private connectedNow = false;
  private scopeObject: bigint | null = null;
  private readonly listeners = new Set<TargetRecordListener>();
  /** For each listener that needs every record only at times, when it does. */
  private readonly wantsEvery = new Map<TargetRecordListener, () => boolean>();
  private readonly sentListeners = new Set<SentFrameListener>();
  private readonly emit = (record: DecodedRecord) => this.record(record);

  constructor(private readonly options: QsTargetLinkOptions) {}

  /** Whether a target is connected to the link (frames can be written). */
  get connected(): boolean {
    return this.connectedNow;
  }

  /** Sizes and version from the latest target info (qspy's defaults before any). */
  get config(): QsTargetConfig & { fromTarget: boolean } {
    this.catchUp();
    return this.decoder.config;
  }

  /** The dictionaries read backwards, for name lookups. */
  get names(): NameIndex {
    this.catchUp();
    return this.nameIndex;
  }

  private get decoder(): QsDecoder {
    this.decoderOrNone ??= new QsDecoder();
    return this.decoderOrNone;
  }

  /** The object that scopes signal names (set by a by-name current-object command), or null. */
  get scope(): bigint | null {
    this.catchUp();
    return this.scopeObject;
  }

  set scope(object: bigint | null) {
    this.scopeObject = object;
  }

  /** The QS-RX sequence number of the last frame sent (0 after a connect or a reset). */
  get lastRxSeq(): number {
    this.catchUp();
    return this.rxSeq;
  }

  /**
   * Calls `listener` with the records of the link. Without `wantsEvery` it gets every record;
   * with it, every record while `wantsEvery()` is true, and otherwise only the ones that set
   * up the link's state (dictionaries, target info) and frame errors: while no listener wants
   * every record, the link's bytes are only skimmed (`QsDecoder.skim`), which costs a gateway
   * a fraction of decoding them.
   */
  onRecord(listener: TargetRecordListener, wantsEvery?: () => boolean): () => void {
    this.listeners.add(listener);
    if (wantsEvery) this.wantsEvery.set(listener, wantsEvery);
    return () => {
      this.listeners.delete(listener);
      this.wantsEvery.delete(listener);
    };
  }

  /** Whether some listener wants every record now. */
  private everyRecordWanted(): boolean {
    for (const listener of this.listeners) {
      const wants = this.wantsEvery.get(listener);
      if (!wants || wants()) return true;
    }
    return false;
  }

  /** Every frame written to the target, whoever sent it (tracehub's commands, the front-end port). */
  onSent(listener: SentFrameListener): () => void {
    this.sentListeners.add(listener);
    return () => this.sentListeners.delete(listener);
  }

  /**
   * A target connected: qspy starts a new record parser (no sequence check on the first
   * record), restarts the QS-RX sequence and forgets the signal scope. The configuration and
   * the dictionaries stay.
   */
  targetConnected(): void {
    this.catchUp();
    this.connectedNow = true;
    if (this.decoderOrNone) {
      const kept = this.decoderOrNone.snapshot() as Record<string, JsonValue>;
      const fresh = new QsDecoder().snapshot() as Record<string, JsonValue>;
      this.decoderOrNone = QsDecoder.restore({ ...kept, deframer: fresh.deframer });
    }
    this.rxSeq = 0;
    this.scopeObject = null;
  }

  targetDisconnected(): void {
    this.connectedNow = false;
  }

  /** Bytes from the target, cut anywhere. */
  data(bytes: Uint8Array): void {
    if (this.everyRecordWanted()) {
      this.catchUp();
      this.decoder.push(bytes, { hostNs: 0n }, this.emit);
      return;
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= SKIM_BATCH_BYTES) this.catchUp();
  }

  /** Skims the bytes kept back, so that the link's state is up to date. */
  private catchUp(): void {
    if (this.pendingBytes === 0) return;
    const bytes = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.decoder.skim(bytes, this.emit);
  }

  /**
   * Frames `[id, payload...]` with the next QS-RX sequence number and writes it. The counter
   * advances even when no target is connected, as qspy's does. A frame longer than qspy's
   * encode buffer is refused before it takes a number.
   */
  send(body: Uint8Array): SentFrame | SendFailure {
    this.catchUp();
    const id = body[0];
    const payload = body.subarray(1);
    const length = encodeFrame(0, id, payload).length;
    if (length > MAX_RX_FRAME_BYTES) return { reason: 'too-long', id, length };
    this.rxSeq = (this.rxSeq + 1) & 0xff;
    const frame = encodeFrame(this.rxSeq, id, payload);
    if (!this.connectedNow) return { reason: 'no-target', id, length: frame.length };
    this.options.write(frame);
    const sent = { seq: this.rxSeq, id, frame };
    for (const listener of this.sentListeners) listener(sent);
    return sent;
  }

  private record(record: DecodedRecord): void {
    if (record.kind === 'dict') this.nameIndex.add(record);
    else if (record.type === QsRecordId.QS_TARGET_INFO && record.kind === 'info') {
      // The codec has already switched sizes and cleared its own dictionaries.
      const f = record.fields;
      if (f.reset === true || f.mismatch === true) this.nameIndex.resetTargetDictionaries();
      if (f.reset === true) {
        this.rxSeq = 0;
        this.scopeObject = null;
      }
    }
    for (const listener of this.listeners) listener(record);
  }
}
