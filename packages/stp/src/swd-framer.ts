import { SWD_END, SWD_ESCAPE_XOR, SWD_PREFIX, SWD_START } from './swd-deframer.js';

/**
 * One message framed for the SWD channel (reference §3.2, spec §11), the mirror of
 * `SwdDeframer`: START, the data with START, END and PREFIX escaped (PREFIX, then the byte
 * XOR 0x20), END; padded with more ENDs to whole 4-byte words, the channel's transfer unit
 * (which the deframer takes as padding).
 */
export function frameSwdMessage(data: Uint8Array): Uint8Array {
  let escapes = 0;
  for (const b of data) if (b === SWD_START || b === SWD_END || b === SWD_PREFIX) escapes++;
  const length = 2 + data.length + escapes;
  const out = new Uint8Array(Math.ceil(length / 4) * 4).fill(SWD_END);
  out[0] = SWD_START;
  let at = 1;
  for (const b of data) {
    if (b === SWD_START || b === SWD_END || b === SWD_PREFIX) {
      out[at++] = SWD_PREFIX;
      out[at++] = b ^ SWD_ESCAPE_XOR;
    } else out[at++] = b;
  }
  return out;
}
