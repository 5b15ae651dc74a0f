import { decodeLatin1, decodeWindows1252, encodeLatin1, encodeWindows1252 } from './windows-1252.js';

/**
 * Character sets a Reporter may expect. The protocol does not name one (§4.3); English Palm
 * ROMs used Windows-1252, which is the default everywhere in this package.
 */
export type PalmTextEncoding = 'windows-1252' | 'latin1' | 'utf-8';

export const DEFAULT_TEXT_ENCODING: PalmTextEncoding = 'windows-1252';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/** Text → bytes; characters the encoding cannot hold become `?` (UTF-8 holds them all). */
export function encodeText(text: string, encoding: PalmTextEncoding = DEFAULT_TEXT_ENCODING): Uint8Array {
  switch (encoding) {
    case 'windows-1252':
      return encodeWindows1252(text);
    case 'latin1':
      return encodeLatin1(text);
    case 'utf-8':
      return utf8Encoder.encode(text);
    default:
      throw new RangeError(`unknown PalmTrace text encoding ${JSON.stringify(encoding)}`);
  }
}

/** Bytes → text; never fails (malformed UTF-8 becomes U+FFFD). */
export function decodeText(bytes: Uint8Array, encoding: PalmTextEncoding = DEFAULT_TEXT_ENCODING): string {
  switch (encoding) {
    case 'windows-1252':
      return decodeWindows1252(bytes);
    case 'latin1':
      return decodeLatin1(bytes);
    case 'utf-8':
      return utf8Decoder.decode(bytes);
    default:
      throw new RangeError(`unknown PalmTrace text encoding ${JSON.stringify(encoding)}`);
  }
}
