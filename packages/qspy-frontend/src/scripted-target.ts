import { QsFrameBuilder, QsPayloadWriter } from '@tracehub/qs';
import { RxId } from './protocol.js';

export interface ScriptedTargetOptions {
  objPtrSize?: number;
  funPtrSize?: number;
  sigSize?: number;
  version?: number;
  /** Build time: second, minute, hour, day, month, year-2000. */
  build?: number[];
}

/**
 * A QS target as far as QS-RX goes, for tests and demos: it reads QS-RX frames and answers as
 * a QP/C 7.4 QUTest target does (front-end spec 7.2): target info for INFO and after RESET,
 * Ack for most commands, Ack then Done for COMMAND/TICK/EVENT, peek and query data, Trg-ERR
 * for a peek, poke or fill without a current AP object or with an item size other than 1/2/4, an AO filter at address 0, an object kind
 * above 6, an unknown record, a bad checksum; and Trg-ERR 0x42 before handling a frame whose
 * sequence number skips. Pure: bytes in (`receive`), bytes out (the `send` callback).
 */
export class ScriptedTarget {
  private readonly tx = new QsFrameBuilder();
  private readonly o: Required<ScriptedTargetOptions>;
  private pending: number[] = [];
  private escaped = false;
  private lastRxSeq = -1;
  private timestamp = 0;
  /** The current AP object (0: none): peek, poke and fill need one. */
  private apObject = 0;
  /** Every QS-RX frame received (seq, id, payload), for assertions. */
  readonly received: { seq: number; id: number; payload: number[] }[] = [];

  constructor(
    private readonly send: (bytes: Uint8Array) => void,
    options: ScriptedTargetOptions = {},
  ) {
    this.o = {
      objPtrSize: 4,
      funPtrSize: 4,
      sigSize: 2,
      version: 740,
      build: [25, 2, 18, 23, 11, 26],
      ...options,
    };
  }

  /** The target starts: target info (reset) and its dictionaries. */
  start(
    dictionaries: {
      objects?: [bigint, string][];
      signals?: [number, bigint, string][];
      commands?: [number, string][];
    } = {},
  ): void {
    this.tx.resetSequence();
    this.lastRxSeq = -1;
    this.targetInfo(true);
    for (const [address, name] of dictionaries.objects ?? []) {
      this.record(61, this.w().uint(address, this.o.objPtrSize).str(name));
    }
    for (const [sig, obj, name] of dictionaries.signals ?? []) {
      this.record(60, this.w().uint(sig, this.o.sigSize).uint(obj, this.o.objPtrSize).str(name));
    }
    for (const [value, name] of dictionaries.commands ?? []) this.record(54, this.w().u8(value).u8(7).str(name));
  }

  /** Bytes from the host (QS-RX), cut anywhere. */
  receive(bytes: Uint8Array): void {
    for (const b of bytes) {
      if (b === 0x7e) {
        const frame = this.pending;
        this.pending = [];
        this.escaped = false;
        this.frame(frame);
      } else if (b === 0x7d) this.escaped = true;
      else {
        this.pending.push(this.escaped ? b ^ 0x20 : b);
        this.escaped = false;
      }
    }
  }

  /** Sends a user record (id 100..124) with a raw payload, as target output unrelated to commands. */
  user(id: number, payload: Uint8Array): void {
    this.send(this.tx.frame(id, payload));
  }

  private frame(f: number[]): void {
    if (f.length < 3) return;
    if (f.reduce((a, b) => a + b, 0) % 256 !== 0xff) {
      this.status(0x80 | 0x41);
      return;
    }
    const [seq, id] = f;
    const payload = f.slice(2, -1);
    this.received.push({ seq, id, payload });
    if (this.lastRxSeq >= 0 && seq !== ((this.lastRxSeq + 1) & 0xff)) this.status(0x80 | 0x42);
    this.lastRxSeq = seq;
    const u = (at: number, n: number) => payload.slice(at, at + n).reduceRight((v, b) => v * 256 + b, 0);
    switch (id) {
      case RxId.INFO:
        this.targetInfo(false);
        return;
      case RxId.RESET:
        this.start();
        return;
      case RxId.COMMAND:
      case RxId.TICK:
      case RxId.EVENT:
        this.status(id);
        // A user record with one U8 element (format byte 1): the command's id.
        this.record(
          100,
          this.w()
            .uint(this.timestamp++, 4)
            .u8(1)
            .u8(id),
        );
        this.record(
          65,
          this.w()
            .uint(this.timestamp++, 4)
            .u8(id),
        );
        return;
      case RxId.PEEK: {
        const size = payload[2];
        const num = payload[3];
        if (this.apObject === 0 || (size !== 1 && size !== 2 && size !== 4)) {
          this.status(0x80 | id);
          return;
        }
        const w = this.w()
          .uint(this.timestamp++, 4)
          .u16(u(0, 2))
          .u8(size)
          .u8(num);
        for (let i = 0; i < num * size; i++) w.u8((u(0, 2) + i) & 0xff);
        this.record(68, w);
        return;
      }
      case RxId.FILL:
      case RxId.POKE: {
        const size = payload[2];
        this.status(this.apObject !== 0 && (size === 1 || size === 2 || size === 4) ? id : 0x80 | id);
        return;
      }
      case RxId.AO_FILTER:
        this.status(u(1, this.o.objPtrSize) === 0 || payload[0] > 6 ? 0x80 | id : id);
        return;
      case RxId.CURR_OBJ:
        if (payload[0] === 5) this.apObject = u(1, this.o.objPtrSize);
        this.status(payload[0] > 6 ? 0x80 | id : id);
        return;
      case RxId.QUERY_CURR:
        this.record(
          67,
          this.w()
            .uint(this.timestamp++, 4)
            .u8(payload[0])
            .uint(0x1000 + payload[0], this.o.objPtrSize)
            .uint(0x2000, this.o.funPtrSize),
        );
        return;
      default:
        this.status(id <= RxId.EVENT ? id : 0x80 | 0x43);
    }
  }

  private targetInfo(reset: boolean): void {
    const o = this.o;
    this.record(
      64,
      this.w()
        .u8(reset ? 0xff : 0)
        .u16(o.version)
        .u8(o.sigSize | 0x20)
        .u8(0x41)
        .u8(0x22)
        .u8(o.objPtrSize | (o.funPtrSize << 4))
        .u8(4)
        .u8(32)
        .u8(0x13)
        .raw(o.build),
    );
  }

  private status(code: number): void {
    this.record(66, this.w().u8(code));
  }

  private w(): QsPayloadWriter {
    return new QsPayloadWriter();
  }

  private record(id: number, payload: QsPayloadWriter): void {
    this.send(this.tx.frame(id, payload.toBytes()));
  }
}
