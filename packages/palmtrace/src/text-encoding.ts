import { decodeLatin1, decodeWindows1252, encodeLatin1, encodeWindows1252 } from './windows-1252.js';

/**
 * Character sets a Reporter may expect. The protocol does not name one (§4.3); English Palm
 * ROMs used Windows-1252, which is the default everywhere in this package.
 */
export type PalmTextEncoding = 'windows-1252' | 'latin1' | 'utf-8';

export const DEFAULT_TEXT_ENCODING: PalmTextEncoding = 'windows-1252';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

interface TextCodec {
  encode(text: string): Uint8Array;
  decode(bytes: Uint8Array): string;
}

/** Each encoding's way there and back. */
const CODECS: Readonly<Record<PalmTextEncoding, TextCodec>> = {
  'windows-1252': { encode: (text) => encodeWindows1252(text), decode: decodeWindows1252 },
  latin1: { encode: (text) => encodeLatin1(text), decode: decodeLatin1 },
  'utf-8': { encode: (text) => utf8Encoder.encode(text), decode: (bytes) => utf8Decoder.decode(bytes) },
};

function codecOf(encoding: PalmTextEncoding): TextCodec {
  if (!Object.hasOwn(CODECS, encoding)) {
    throw new RangeError(`unknown PalmTrace text encoding ${JSON.stringify(encoding)}`);
  }
  return CODECS[encoding];
}

/** Text → bytes; characters the encoding cannot hold become `?` (UTF-8 holds them all). */
export function encodeText(text: string, encoding: PalmTextEncoding = DEFAULT_TEXT_ENCODING): Uint8Array {
  return codecOf(encoding).encode(text);
}

/** Bytes → text; never fails (malformed UTF-8 becomes U+FFFD). */
export function decodeText(bytes: Uint8Array, encoding: PalmTextEncoding = DEFAULT_TEXT_ENCODING): string {
  return codecOf(encoding).decode(bytes);
}
