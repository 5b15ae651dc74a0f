/**
 * A QS-RX frame as the QS spec lays it out, written out by hand for comparisons: seq, id,
 * payload, checksum (~sum), escaped (0x7E, 0x7D), then the 0x7E flag.
 */
export function qsFrame(seq: number, id: number, payload: number[]): Buffer {
  const body = [seq, id, ...payload];
  body.push(~body.reduce((a, b) => a + b, 0) & 0xff);
  const out: number[] = [];
  for (const b of body) {
    if (b === 0x7e || b === 0x7d) out.push(0x7d, b ^ 0x20);
    else out.push(b);
  }
  out.push(0x7e);
  return Buffer.from(out);
}
