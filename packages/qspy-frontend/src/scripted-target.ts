import { QsDeframer, QsFrameBuilder, QsFrameError, QsPayloadWriter, QsRecordId, QsRxId } from '@tracehub/qs';

export interface ScriptedTargetOptions {
  objPtrSize?: number;
  funPtrSize?: number;
  sigSize?: number;
  /** QP version, e.g. 740; from 800 the target info has the QP 8.x layout. */
  version?: number;
  /** QP 8.x: the release date in the target info, yymm. */
  releaseDate?: number;
  /** Build time: second, minute, hour, day, month, year-2000. */
  build?: number[];
}

/**
 * A QS target as far as QS-RX goes, for tests and demos: it reads QS-RX frames and answers as
 * a QP/C 7.4 (or, with `version` 800 or more, 8.x) QUTest target does (front-end spec 7.2): target info for INFO and after RESET,
 * Ack for most commands, Ack then Done for COMMAND/TICK/EVENT, peek and query data, Trg-ERR
 * for a peek, poke or fill without a current AP object or with an item size other than 1/2/4, an AO filter at address 0, an object kind
 * above 6, an unknown record, a bad checksum; and Trg-ERR 0x42 before handling a frame whose
 * sequence number skips. Pure: bytes in (`receive`), bytes out (the `send` callback).
 */
export class ScriptedTarget {
  private readonly tx = new QsFrameBuilder();
  private readonly o: Required<ScriptedTargetOptions>;
  /** QS-RX frames un-escaped and checksummed as qspy reads QS frames: the same framing both ways. */
  private readonly rx = new QsDeframer({
    frame: (buf, start, length) => this.frame(Array.from(buf.subarray(start, start + length))),
    frameError: (error, _buf, _start, length) => {
      // A frame that fails its checksum is refused; one too short to be a record (nothing
      // between two flags) is passed over.
      if (error === QsFrameError.BAD_CHECKSUM && length >= 3) this.status(0x80 | 0x41);
    },
  });
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
      releaseDate: 2511,
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
      this.record(QsRecordId.QS_OBJ_DICT, this.w().uint(address, this.o.objPtrSize).str(name));
    }
    for (const [sig, obj, name] of dictionaries.signals ?? []) {
      this.record(QsRecordId.QS_SIG_DICT, this.w().uint(sig, this.o.sigSize).uint(obj, this.o.objPtrSize).str(name));
    }
    for (const [value, name] of dictionaries.commands ?? [])
      this.record(QsRecordId.QS_ENUM_DICT, this.w().u8(value).u8(7).str(name));
  }

  /** Bytes from the host (QS-RX), cut anywhere. */
  receive(bytes: Uint8Array): void {
    this.rx.push(bytes);
  }

  /** Sends a user record (id 100..124) with a raw payload, as target output unrelated to commands. */
  user(id: number, payload: Uint8Array): void {
    this.send(this.tx.frame(id, payload));
  }

  /** A frame with a good checksum: seq, record id, payload, checksum. */
  private frame(f: number[]): void {
    const [seq, id] = f;
    const payload = f.slice(2, -1);
    this.received.push({ seq, id, payload });
    if (this.lastRxSeq >= 0 && seq !== ((this.lastRxSeq + 1) & 0xff)) this.status(0x80 | 0x42);
    this.lastRxSeq = seq;
    const u = (at: number, n: number) => payload.slice(at, at + n).reduceRight((v, b) => v * 256 + b, 0);
    switch (id) {
      case QsRxId.QS_RX_INFO:
        this.targetInfo(false);
        return;
      case QsRxId.QS_RX_RESET:
        this.start();
        return;
      case QsRxId.QS_RX_COMMAND:
      case QsRxId.QS_RX_TICK:
      case QsRxId.QS_RX_EVENT:
        this.status(id);
        // A user record with one U8 element (format byte 1): the command's id.
        this.record(
          QsRecordId.QS_USER,
          this.w()
            .uint(this.timestamp++, 4)
            .u8(1)
            .u8(id),
        );
        this.record(
          QsRecordId.QS_TARGET_DONE,
          this.w()
            .uint(this.timestamp++, 4)
            .u8(id),
        );
        return;
      case QsRxId.QS_RX_PEEK: {
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
        this.record(QsRecordId.QS_PEEK_DATA, w);
        return;
      }
      case QsRxId.QS_RX_FILL:
      case QsRxId.QS_RX_POKE: {
        const size = payload[2];
        this.status(this.apObject !== 0 && (size === 1 || size === 2 || size === 4) ? id : 0x80 | id);
        return;
      }
      case QsRxId.QS_RX_AO_FILTER:
        this.status(u(1, this.o.objPtrSize) === 0 || payload[0] > 6 ? 0x80 | id : id);
        return;
      case QsRxId.QS_RX_CURR_OBJ:
        if (payload[0] === 5) this.apObject = u(1, this.o.objPtrSize);
        this.status(payload[0] > 6 ? 0x80 | id : id);
        return;
      case QsRxId.QS_RX_QUERY_CURR:
        this.record(
          QsRecordId.QS_QUERY_DATA,
          this.w()
            .uint(this.timestamp++, 4)
            .u8(payload[0])
            .uint(0x1000 + payload[0], this.o.objPtrSize)
            .uint(0x2000, this.o.funPtrSize),
        );
        return;
      default:
        this.status(id <= QsRxId.QS_RX_EVENT ? id : 0x80 | 0x43);
    }
  }

  private targetInfo(reset: boolean): void {
    const o = this.o;
    const w = this.w();
    // QP 8.x (spec 12): a flags byte (the 8.x mark 2, framework 1 = QP/C, bit 6 reset), then the
    // bit-inverted release date * 10000 + version. Before: the reset byte, then the version.
    if (o.version >= 800) w.u8(0x02 | (1 << 2) | (reset ? 0x40 : 0)).u32(~(o.releaseDate * 10000 + o.version) >>> 0);
    else w.u8(reset ? 0xff : 0).u16(o.version);
    this.record(
      QsRecordId.QS_TARGET_INFO,
      w
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
    this.record(QsRecordId.QS_RX_STATUS, this.w().u8(code));
  }

  private w(): QsPayloadWriter {
    return new QsPayloadWriter();
  }

  private record(id: number, payload: QsPayloadWriter): void {
    this.send(this.tx.frame(id, payload.toBytes()));
  }
}
