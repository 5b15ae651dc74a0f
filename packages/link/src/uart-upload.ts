/**
 * The trace box's UART upload to a traced device (reference §3.1, stp-protocol.md §11): break,
 * the device's bit-rate message, the 4-byte little-endian length and its acknowledgement, the
 * data and its acknowledgement, each with its timeout; every way it can fail is an outcome.
 * The device answers inside its STP trace (control messages on channel 0x01), which the
 * caller decodes and hands over with `control`; the upload itself owns no I/O.
 */

/** A device-to-box control message as the STP codec decodes it (`fields.control` of its record). */
export interface DeviceControl {
  type: 'bit_rate' | 'bit_rate_ascii' | 'ack_length' | 'ack_data';
  bit_rate?: number;
  text?: string;
}

export type UploadOutcome =
  | 'uploaded'
  /** The device sent no bit-rate message within `bitRateMs` of the break. */
  | 'no-bit-rate'
  /** The bit rate the device asked for is below `minBitRate`. */
  | 'bit-rate-too-low'
  /** The nearest rate the UART can make is more than `maxDeviation` off the one asked for. */
  | 'bit-rate-deviation'
  /** No acknowledgement (0x01) of the length within `lengthAckMs`. */
  | 'no-length-ack'
  /** No acknowledgement (0x02) of the data within `dataAckMs`. */
  | 'no-data-ack'
  /** The link could not send (no target connected, the port closed). */
  | 'write-failed';

export interface UploadResult {
  ok: boolean;
  outcome: UploadOutcome;
  /** What went wrong, in a sentence ('' when uploaded). */
  error: string;
  /** The bit rate the device asked for, and the one the UART was set to. */
  bitRate: number | null;
  setBitRate: number | null;
  /** Bytes of data sent. */
  bytes: number;
  ms: number;
}

/** What the upload needs of the link. */
export interface UploadIo {
  /** Holds the line in break for `ms` (a serial port), or says so in band (TCP: telnet BRK). */
  sendBreak(ms: number): Promise<void>;
  /** Sets the UART to the bit rate (a serial port; nominal on TCP). */
  setBitRate(bitsPerSecond: number): Promise<void>;
  /** Writes bytes; resolves once they are sent (drained). */
  write(bytes: Uint8Array): Promise<void>;
}

/** The reference's timing and rules; tests may shorten nothing but the clock of the UART. */
export interface UploadRules {
  breakMs: number;
  bitRateMs: number;
  lengthAckMs: number;
  dataAckMs: number;
  minBitRate: number;
  maxDeviation: number;
  /**
   * The UART makes `clockHz / n` for a whole divisor n >= 1: the rate set is the nearest of
   * those. 48 MHz is our reading: the reference's own example rate, "2285714.286", is 48 MHz / 21.
   */
  uartClockHz: number;
}

export const UART_UPLOAD_RULES: Readonly<UploadRules> = Object.freeze({
  breakMs: 200,
  bitRateMs: 2000,
  lengthAckMs: 100,
  dataAckMs: 100,
  minBitRate: 100,
  maxDeviation: 0.02,
  uartClockHz: 48_000_000,
});

/** The nearest rate `clockHz / n` to `asked`, and how far off it is (a fraction). */
export function nearestUartRate(asked: number, clockHz: number): { rate: number; deviation: number } {
  const n = Math.max(1, Math.round(clockHz / asked));
  const rate = clockHz / n;
  return { rate, deviation: Math.abs(rate - asked) / asked };
}

type Waiter = {
  types: DeviceControl['type'][];
  resolve: (m: DeviceControl | null) => void;
  timer: NodeJS.Timeout | undefined;
};

/** An answer waited for: listening from now, its timeout counted from `startClock`. */
interface Expected {
  answer: Promise<DeviceControl | null>;
  startClock(ms: number): void;
}

/** One upload at a time per link: `run` it, and feed it the device's control messages. */
export class UartUpload {
  private waiter: Waiter | null = null;

  constructor(
    private readonly io: UploadIo,
    private readonly rules: UploadRules = UART_UPLOAD_RULES,
  ) {}

  /** A control message from the device (any order; one not waited for is ignored). */
  control(message: DeviceControl): void {
    const w = this.waiter;
    if (!w || !w.types.includes(message.type)) return;
    clearTimeout(w.timer);
    this.waiter = null;
    w.resolve(message);
  }

  /**
   * Listens for one of `types` from now (before the write that makes the device answer, which
   * may come back before the write's own callback); the timeout runs from `startClock`.
   */
  private expect(types: DeviceControl['type'][]): Expected {
    let waiter: Waiter | undefined;
    const answer = new Promise<DeviceControl | null>((resolve) => {
      waiter = { types, resolve, timer: undefined };
      this.waiter = waiter;
    });
    return {
      answer,
      startClock: (ms) => {
        const w = waiter!;
        if (this.waiter !== w) return;
        w.timer = setTimeout(() => {
          if (this.waiter === w) this.waiter = null;
          w.resolve(null);
        }, ms);
      },
    };
  }

  async run(data: Uint8Array): Promise<UploadResult> {
    const started = performance.now();
    const { rules } = this;
    let bitRate: number | null = null;
    let setBitRate: number | null = null;
    const done = (outcome: UploadOutcome, error = ''): UploadResult => ({
      ok: outcome === 'uploaded',
      outcome,
      error,
      bitRate,
      setBitRate,
      bytes: outcome === 'uploaded' ? data.length : 0,
      ms: Math.round(performance.now() - started),
    });
    try {
      // The device answers within 2 s of the break; the wait starts as the break does.
      const rateAnswer = this.expect(['bit_rate', 'bit_rate_ascii']);
      rateAnswer.startClock(rules.breakMs + rules.bitRateMs);
      await this.io.sendBreak(rules.breakMs);
      const rate = await rateAnswer.answer;
      if (!rate) return done('no-bit-rate', `the device sent no bit rate within ${rules.bitRateMs} ms of the break`);
      bitRate = rate.bit_rate ?? Number.parseFloat(rate.text ?? '');
      if (!Number.isFinite(bitRate) || bitRate < rules.minBitRate)
        return done(
          'bit-rate-too-low',
          `the device asked for ${rate.bit_rate ?? rate.text} b/s; the least is ${rules.minBitRate}`,
        );
      const nearest = nearestUartRate(bitRate, rules.uartClockHz);
      if (nearest.deviation > rules.maxDeviation)
        return done(
          'bit-rate-deviation',
          `the device asked for ${bitRate} b/s; the nearest the UART makes is ${nearest.rate.toFixed(1)} (${(nearest.deviation * 100).toFixed(2)} % off, at most ${rules.maxDeviation * 100} %)`,
        );
      setBitRate = nearest.rate;
      await this.io.setBitRate(Math.round(nearest.rate));
      const length = new Uint8Array(4);
      new DataView(length.buffer).setUint32(0, data.length, true);
      // Each acknowledgement is due within 100 ms of the last byte sent.
      const lengthAnswer = this.expect(['ack_length']);
      await this.io.write(length);
      lengthAnswer.startClock(rules.lengthAckMs);
      const lengthAck = await lengthAnswer.answer;
      if (!lengthAck)
        return done('no-length-ack', `the device did not acknowledge the length within ${rules.lengthAckMs} ms`);
      const dataAnswer = this.expect(['ack_data']);
      await this.io.write(data);
      dataAnswer.startClock(rules.dataAckMs);
      const dataAck = await dataAnswer.answer;
      if (!dataAck) return done('no-data-ack', `the device did not acknowledge the data within ${rules.dataAckMs} ms`);
      return done('uploaded');
    } catch (err) {
      return done('write-failed', err instanceof Error ? err.message : String(err));
    } finally {
      if (this.waiter?.timer) clearTimeout(this.waiter.timer);
      this.waiter = null;
    }
  }
}
