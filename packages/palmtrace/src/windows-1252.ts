/**
 * Windows-1252 by hand: one 256-entry table, so that the codec needs no iconv and works the
 * same on Node builds without full ICU. The table follows the WHATWG Encoding Standard
 * (index-single-byte windows-1252): bytes 0x81, 0x8D, 0x8F, 0x90 and 0x9D, undefined in the
 * Microsoft code page, map to the C1 controls of the same value.
 */

/** Unicode code point of every Windows-1252 byte. */
export const WINDOWS_1252_TO_UNICODE: Uint16Array = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) table[byte] = byte;
  // The only bytes that differ from Latin-1: 0x80–0x9F.
  const high = [
    0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d,
    0x017d, 0x008f, 0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a,
    0x0153, 0x009d, 0x017e, 0x0178,
  ];
  for (let i = 0; i < high.length; i++) table[0x80 + i] = high[i];
  return table;
})();

/** Code points outside 0x00–0x7F and 0xA0–0xFF that Windows-1252 can encode, and their byte. */
const UNICODE_TO_WINDOWS_1252_HIGH: ReadonlyMap<number, number> = new Map(
  Array.from({ length: 32 }, (_, i) => [WINDOWS_1252_TO_UNICODE[0x80 + i], 0x80 + i] as const),
);

/** Byte written for a character the target encoding has no byte for (`?`, as §4.3 asks). */
export const UNMAPPABLE_REPLACEMENT = 0x3f;

/** Byte of one code point, or -1 when Windows-1252 has none. */
export function windows1252ByteOf(codePoint: number): number {
  if (codePoint < 0x80 || (codePoint >= 0xa0 && codePoint <= 0xff)) return codePoint;
  return UNICODE_TO_WINDOWS_1252_HIGH.get(codePoint) ?? -1;
}

/**
 * Encodes `text` as Windows-1252. Rule for unmappable characters: every Unicode code point
 * with no Windows-1252 byte (a surrogate pair counts as one, a lone surrogate too) becomes
 * one `replacement` byte, `?` by default. One byte per code point, so the output is never
 * longer than `text.length`.
 */
export function encodeWindows1252(text: string, replacement = UNMAPPABLE_REPLACEMENT): Uint8Array {
  return encodeByCodePoint(text, windows1252ByteOf, replacement);
}

/** Encodes `text` as ISO-8859-1: code points above 0xFF become one `replacement` byte each. */
export function encodeLatin1(text: string, replacement = UNMAPPABLE_REPLACEMENT): Uint8Array {
  return encodeByCodePoint(text, (codePoint) => (codePoint <= 0xff ? codePoint : -1), replacement);
}

/** One byte per code point of `text`: its `byteOf`, or `replacement` where that is -1. */
function encodeByCodePoint(text: string, byteOf: (codePoint: number) => number, replacement: number): Uint8Array {
  const out = new Uint8Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    let codePoint = text.charCodeAt(i);
    if (codePoint >= 0xd800 && codePoint <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        codePoint = 0x10000 + ((codePoint - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    const byte = byteOf(codePoint);
    out[length++] = byte < 0 ? replacement : byte;
  }
  return length === out.length ? out : out.subarray(0, length);
}

/** Code units decoded per `String.fromCharCode` call: well under any engine's argument limit. */
const DECODE_SLICE = 4096;
/** Reused for the mapped code units of one slice; decoding is synchronous, so one is enough. */
const scratchUnits = new Uint16Array(DECODE_SLICE);
/**
 * Native decoder for bytes with none in 0x80–0x9F, where Latin-1 and Windows-1252 agree; so
 * it does not matter that some Node releases treat the 'latin1' label as one and some as the
 * other. Node has this label even when built without ICU.
 */
const sameInBothDecoder = new TextDecoder('latin1');

function hasC1Byte(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] & 0xe0) === 0x80) return true;
  return false;
}

/** Bytes → string through `table`, or as Latin-1 when `table` is null. */
function decodeByTable(bytes: Uint8Array, table: Uint16Array | null): string {
  // Nearly all trace text: one native call, no copy.
  if (!hasC1Byte(bytes)) return sameInBothDecoder.decode(bytes);
  let text = '';
  for (let start = 0; start < bytes.length; start += DECODE_SLICE) {
    const count = Math.min(DECODE_SLICE, bytes.length - start);
    for (let i = 0; i < count; i++) {
      const byte = bytes[start + i];
      scratchUnits[i] = table === null ? byte : table[byte];
    }
    text += String.fromCharCode.apply(null, scratchUnits.subarray(0, count) as unknown as number[]);
  }
  return text;
}

/** Decodes Windows-1252 bytes; every byte has a character, so this never fails. */
export function decodeWindows1252(bytes: Uint8Array): string {
  return decodeByTable(bytes, WINDOWS_1252_TO_UNICODE);
}

/** Decodes ISO-8859-1 bytes. */
export function decodeLatin1(bytes: Uint8Array): string {
  return decodeByTable(bytes, null);
}
