const HEX = '0123456789abcdef';
const BYTE_HEX: string[] = Array.from({ length: 256 }, (_, i) => HEX[i >> 4] + HEX[i & 15]);

/** Lower-case hex of bytes (no separators). */
export function bytesToHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let out = '';
  for (let i = start; i < end; i++) out += BYTE_HEX[bytes[i]];
  return out;
}

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

/** `0x` and `digits` upper-case hex digits of a 64-bit value given as two 32-bit halves. */
export function hex64(hi: number, lo: number, digits: number): string {
  const s = hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
  return `0x${s.slice(16 - digits).toUpperCase()}`;
}
