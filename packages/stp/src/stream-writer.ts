import { PKT_OPCODE, PKT_PAYLOAD, Pkt, packetOf } from './packets.js';

/**
 * Builds STP nibble streams (spec §1): nibble 2k in bits [3:0] of byte k, multi-nibble fields
 * most significant nibble first; an odd stream is padded with one NULL nibble. Used by tests,
 * the benchmark and tools that need synthetic captures.
 */
export class StpStreamWriter {
  private buf = new Uint8Array(256);
  private nibbles = 0;

  get length(): number {
    return this.nibbles;
  }

  nibble(n: number): this {
    const i = this.nibbles >> 1;
    if (i >= this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    if ((this.nibbles & 1) === 0) this.buf[i] = n & 15;
    else this.buf[i] |= (n & 15) << 4;
    this.nibbles++;
    return this;
  }

  /** `count` nibbles of `value`, most significant first. */
  field(value: number | bigint, count: number): this {
    const v = BigInt(value);
    for (let i = count - 1; i >= 0; i--) this.nibble(Number((v >> BigInt(i * 4)) & 15n));
    return this;
  }

  /** Nibbles given as a hex string in stream order ("F003" = F, 0, 0, 3). */
  seq(hex: string): this {
    for (const c of hex) this.nibble(Number.parseInt(c, 16));
    return this;
  }

  /**
   * A packet as the spec table has it: its opcode, `value` as its payload (most significant
   * nibble first), then `ts`, its timestamp field's nibbles in stream order (length nibble
   * included, e.g. "3123").
   */
  packet(kind: Pkt, value: number | bigint = 0, ts = ''): this {
    return this.seq(PKT_OPCODE[kind]).field(value, PKT_PAYLOAD[kind]).seq(ts);
  }

  // --- STP v2 -------------------------------------------------------------------------------

  async(fCount = 21): this {
    for (let i = 0; i < fCount; i++) this.nibble(15);
    return this.nibble(0);
  }

  version(v: number): this {
    return this.packet(Pkt.VERSION, v);
  }

  m8(m: number): this {
    return this.packet(Pkt.M8, m);
  }

  c8(c: number): this {
    return this.packet(Pkt.C8, c);
  }

  /** A v2 data packet of `bytes` (0.5 = D4, 1, 2, 4, 8) in one of the forms, `ts` as for `packet`. */
  data(bytes: 0.5 | 1 | 2 | 4 | 8, value: number | bigint, form: '' | 'M' | 'TS' | 'MTS' = '', ts = ''): this {
    return this.packet(packetOf(2, `D${bytes * 8}${form}`), value, ts);
  }

  /**
   * TIME (F,0,4), or TIME_TS (F,0,5) when `ts` is given: clock index, timestamp version, then
   * `field` (the time coded as that version's timestamp, nibbles in stream order).
   */
  time(clock: number, version: number, field: string, ts?: string): this {
    return this.packet(ts === undefined ? Pkt.TIME : Pkt.TIME_TS)
      .nibble(clock)
      .nibble(version)
      .seq(field)
      .seq(ts ?? '');
  }

  // --- STP v1 -------------------------------------------------------------------------------

  /** A v1 Dnn (ts undefined) or DnnTS (ts = the 8-bit timestamp). */
  v1Data(bytes: 1 | 2 | 4 | 8, value: number | bigint, ts?: number): this {
    this.packet(packetOf(1, `D${bytes * 8}${ts === undefined ? '' : 'TS'}`), value);
    return ts === undefined ? this : this.field(ts, 2);
  }

  /** The stream as bytes (a copy), padded with a NULL nibble when odd. */
  bytes(): Uint8Array {
    return this.buf.slice(0, (this.nibbles + 1) >> 1);
  }
}
