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

  // --- STP v2 -------------------------------------------------------------------------------

  async(fCount = 21): this {
    for (let i = 0; i < fCount; i++) this.nibble(15);
    return this.nibble(0);
  }

  version(v: number): this {
    return this.seq('F00').nibble(v);
  }

  m8(m: number): this {
    return this.nibble(1).field(m, 2);
  }

  m16(m: number): this {
    return this.seq('F1').field(m, 4);
  }

  c8(c: number): this {
    return this.nibble(3).field(c, 2);
  }

  c16(c: number): this {
    return this.seq('F3').field(c, 4);
  }

  /**
   * A v2 data packet of `bytes` (0.5 = D4, 1, 2, 4, 8) in one of the forms; `ts` is the raw
   * timestamp field nibbles in stream order (length nibble included), e.g. "3123".
   */
  data(bytes: 0.5 | 1 | 2 | 4 | 8, value: number | bigint, form: '' | 'M' | 'TS' | 'MTS' = '', ts = ''): this {
    const size = bytes === 0.5 ? 0 : ({ 1: 0, 2: 1, 4: 2, 8: 3 } as Record<number, number>)[bytes];
    if (bytes === 0.5) {
      if (form === '') this.nibble(0xc);
      else if (form === 'MTS') this.nibble(0xd);
      else if (form === 'TS') this.seq('FC');
      else this.seq('FD');
    } else if (form === '') this.nibble(4 + size);
    else if (form === 'MTS') this.nibble(8 + size);
    else if (form === 'TS') this.nibble(15).nibble(4 + size);
    else this.nibble(15).nibble(8 + size);
    this.field(value, bytes === 0.5 ? 1 : bytes * 2);
    return this.seq(ts);
  }

  flag(): this {
    return this.seq('FE');
  }

  flagTs(ts: string): this {
    return this.nibble(0xe).seq(ts);
  }

  /**
   * TIME (F,0,4), or TIME_TS (F,0,5) when `ts` is given: clock index, timestamp version, then
   * `field` (the time coded as that version's timestamp, nibbles in stream order).
   */
  time(clock: number, version: number, field: string, ts?: string): this {
    this.seq(ts === undefined ? 'F04' : 'F05')
      .nibble(clock)
      .nibble(version)
      .seq(field);
    return ts === undefined ? this : this.seq(ts);
  }

  merr(code: number): this {
    return this.nibble(2).field(code, 2);
  }

  gerr(code: number): this {
    return this.seq('F2').field(code, 2);
  }

  // --- STP v1 -------------------------------------------------------------------------------

  v1Master(m: number): this {
    return this.nibble(1).field(m, 2);
  }

  v1Channel(c: number): this {
    return this.nibble(3).field(c, 2);
  }

  /** A v1 Dnn (ts undefined) or DnnTS (ts = the 8-bit timestamp). */
  v1Data(bytes: 1 | 2 | 4 | 8, value: number | bigint, ts?: number): this {
    const size = ({ 1: 0, 2: 1, 4: 2, 8: 3 } as Record<number, number>)[bytes];
    this.nibble((ts === undefined ? 4 : 8) + size).field(value, bytes * 2);
    if (ts !== undefined) this.field(ts, 2);
    return this;
  }

  v1Ovrf(code: number): this {
    return this.nibble(2).field(code, 2);
  }

  /** The stream as bytes (a copy), padded with a NULL nibble when odd. */
  bytes(): Uint8Array {
    return this.buf.slice(0, (this.nibbles + 1) >> 1);
  }
}
