/** Readable one-line forms of output messages (the records' `text`). */

/** How many data bytes a text line shows before it elides the rest. */
const TEXT_MAX_BYTES = 64;
const HEX = '0123456789abcdef';

function hex2(v: number, width: number): string {
  return v.toString(16).padStart(width, '0');
}

/** `00 3d 7a 74 |.=zt|`: data as spaced hex and printable ASCII, elided past 64 bytes. */
export function dataText(data: Uint8Array): string {
  const shown = Math.min(data.length, TEXT_MAX_BYTES);
  let hex = '';
  let ascii = '';
  for (let i = 0; i < shown; i++) {
    const b = data[i];
    if (i > 0) hex += ' ';
    hex += HEX[b >> 4] + HEX[b & 15];
    ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
  }
  const more = data.length > shown ? ` …(+${data.length - shown} bytes)` : '';
  return `${hex} |${ascii}|${more}`;
}

/** `M0041 C0001 @<time> <what> [n]: <data>`. */
export function messageText(master: number, channel: number, time: string, what: string, data: Uint8Array): string {
  const body = data.length === 0 ? '(empty)' : dataText(data);
  return `M${hex2(master, 4)} C${hex2(channel, 4)} @${time} ${what} [${data.length}] ${body}`;
}

/** Nanoseconds as `seconds.nanoseconds`. */
export function nsText(ns: bigint): string {
  const negative = ns < 0n;
  const abs = negative ? -ns : ns;
  return `${negative ? '-' : ''}${abs / 1_000_000_000n}.${(abs % 1_000_000_000n).toString().padStart(9, '0')}`;
}
