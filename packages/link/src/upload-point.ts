import type { DecodedRecord } from '@tracehub/contracts';
import { StpDecoder, type StpDecoderOptions } from '@tracehub/stp';
import type { LinkSource } from './link-source.js';
import {
  type DeviceControl,
  UART_UPLOAD_RULES,
  UartUpload,
  type UploadResult,
  type UploadRules,
} from './uart-upload.js';

/** A break said in band where the link has no line to hold (TCP): telnet's IAC BRK. */
export const IN_BAND_BREAK = Uint8Array.of(0xff, 0xf3);

/**
 * An STP link's side of the UART upload: while an upload runs, the bytes the link reads are
 * decoded here as well (after the publisher), so that the device's control messages on
 * channel 0x01 reach the upload within its 100 ms timeouts; the published path would take
 * a chunk's flush time at least. Between uploads it costs nothing.
 */
export class UploadPoint {
  private decoder: StpDecoder | null = null;
  private upload: UartUpload | null = null;
  private readonly emit = (record: DecodedRecord) => {
    const control = record.fields.control as DeviceControl | undefined;
    if (control) this.upload?.control(control);
  };

  constructor(
    private readonly source: LinkSource,
    private readonly decoderOptions: StpDecoderOptions,
    private readonly rules: UploadRules = UART_UPLOAD_RULES,
  ) {}

  get busy(): boolean {
    return this.upload !== null;
  }

  /** Bytes the link read (only decoded while an upload runs). */
  data(bytes: Uint8Array): void {
    this.decoder?.push(bytes, { hostNs: 0n }, this.emit);
  }

  /** Runs one upload; throws when one is running already. */
  async run(data: Uint8Array): Promise<UploadResult> {
    if (this.upload) throw new Error('an upload to this link is running already');
    const { source } = this;
    const upload = new UartUpload(
      {
        sendBreak: async (ms) => {
          if (source.sendBreak) await source.sendBreak(ms);
          else await source.write(IN_BAND_BREAK);
        },
        setBitRate: async (bps) => {
          await source.setBitRate?.(bps);
        },
        write: async (bytes) => {
          await source.write(bytes);
        },
      },
      this.rules,
    );
    this.decoder = new StpDecoder({ ...this.decoderOptions, output: 'ost' });
    this.upload = upload;
    try {
      return await upload.run(data);
    } finally {
      this.upload = null;
      this.decoder = null;
    }
  }
}
