/** Readable one-line forms of output messages (the records' `text`). */

/** How many data bytes a text line shows before it elides the rest. */
const TEXT_MAX_BYTES = 64;
const HEX = '0123456789abcdef';

/** Four hex digits (masters and channels are 16-bit). */
function hex4(v: number): string {
  return HEX[(v >> 12) & 15] + HEX[(v >> 8) & 15] + HEX[(v >> 4) & 15] + HEX[v & 15];
}

const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, b) => HEX[b >> 4] + HEX[b & 15]);
const BYTE_CHAR: readonly string[] = Array.from({ length: 256 }, (_, b) =>
  b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.',
);

/** `00 3d 7a 74 |.=zt|`: data as spaced hex and printable ASCII, elided past 64 bytes. */
export function dataText(data: Uint8Array, length = data.length): string {
  const shown = Math.min(length, TEXT_MAX_BYTES);
  if (shown === 0) return '||';
  let hex = BYTE_HEX[data[0]];
  let ascii = BYTE_CHAR[data[0]];
  for (let i = 1; i < shown; i++) {
    const b = data[i];
    hex += ` ${BYTE_HEX[b]}`;
    ascii += BYTE_CHAR[b];
  }
  const more = length > shown ? ` …(+${length - shown} bytes)` : '';
  return `${hex} |${ascii}|${more}`;
}

/**
 * `M0041 C0001 @ts=0x… <what> [n] <data>`, the device timestamp only when the message has one.
 * The host's receive time is never part of the text: it is the record's own `hostNs`, so the
 * text of the same bytes is the same live and offline.
 */
export function messageText(
  master: number,
  channel: number,
  deviceTs: string | null,
  what: string,
  data: Uint8Array,
  length = data.length,
): string {
  const body = length === 0 ? '(empty)' : dataText(data, length);
  const time = deviceTs === null ? '' : `@ts=${deviceTs} `;
  return `M${hex4(master)} C${hex4(channel)} ${time}${what} [${length}] ${body}`;
}

/** Nanoseconds as `seconds.nanoseconds`. */
export function nsText(ns: bigint): string {
  const negative = ns < 0n;
  const abs = negative ? -ns : ns;
  return `${negative ? '-' : ''}${abs / 1_000_000_000n}.${(abs % 1_000_000_000n).toString().padStart(9, '0')}`;
}
