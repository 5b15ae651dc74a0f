// Reading a trace box byte stream as the reference describes it (stp-protocol.md §9, §10), and
// the markers written from those tables by hand: what the trace box output tests compare with.

/** Splits OST (0x10 …) or PhoNet (0x1D …) messages; throws on a stream that does not split. */
export function splitTraceBoxMessages(bytes: Uint8Array): Buffer[] {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Buffer[] = [];
  let at = 0;
  while (at < b.length) {
    let length: number;
    if (b[at] === 0x10) length = b[at + 3] !== 0 ? 4 + b[at + 3] : 8 + b.readUInt32LE(at + 4);
    else if (b[at] === 0x1d) length = 6 + b.readUInt16BE(at + 4);
    else throw new Error(`byte ${at}: 0x${b[at].toString(16)} starts no OST or PhoNet message`);
    if (at + length > b.length) throw new Error(`byte ${at}: a message of ${length} bytes runs past the end`);
    out.push(b.subarray(at, at + length));
    at += length;
  }
  return out;
}

/** Where a message's 64-bit timestamp is (OST: after port/type, master/sender; PhoNet: bytes 12–19). */
function timestampOffset(m: Uint8Array): number {
  if (m[0] === 0x1d) return 12;
  return (m[3] === 0 ? 8 : 4) + 3;
}

/**
 * The message with the 60 time bits of its timestamp cleared, the 4 flag bits kept: a live
 * link stamps the host's receive time where an offline decode stamps its own clock.
 */
export function apartFromTime(m: Uint8Array): string {
  const copy = Buffer.from(m);
  const at = timestampOffset(copy);
  copy[at] &= 0xf0;
  copy.fill(0, at + 1, at + 8);
  return copy.toString('hex');
}

/** The 60-bit time of a message's timestamp, ns. */
export function timeOf(m: Uint8Array): bigint {
  return Buffer.from(m).readBigUInt64BE(timestampOffset(m)) & ((1n << 60n) - 1n);
}

/** A marker's timestamp before its time is known: the flag 1101 (Fido-set time, §9.1) and no time. */
const FIDO_TIME = Buffer.from([0xd0, 0, 0, 0, 0, 0, 0, 0]);

/** An OST marker (§10): 0x10, entity 0xF0, 0x81, length, 0xFF, type, sender, timestamp, index, params, comment. */
export function ostMarker(type: number, sender: number, index: number, params: number[], comment: string): Buffer {
  const body = Buffer.concat([
    Buffer.from([0xff, type, sender]),
    FIDO_TIME,
    u32be(index),
    Buffer.from([params.length, ...params]),
    Buffer.from(comment === '' ? '' : `${comment}\0`, 'utf8'),
  ]);
  if (body.length > 255) throw new Error('long markers are not needed here');
  return Buffer.concat([Buffer.from([0x10, 0xf0, 0x81, body.length]), body]);
}

/** A PhoNet marker (§9.2, §10): media, receiver, sender device, 0x7C, length, objects, transaction, 0xFF, type, 0, timestamp, index, params, comment. */
export function phonetMarker(
  type: number,
  sender: number,
  transaction: number,
  index: number,
  params: number[],
  comment: string,
): Buffer {
  const rest = Buffer.concat([
    Buffer.from([0x00, sender, transaction, 0xff, type, 0x00]),
    FIDO_TIME,
    u32be(index),
    Buffer.from([params.length, ...params]),
    Buffer.from(comment === '' ? '' : `${comment}\0`, 'utf8'),
  ]);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(rest.length);
  return Buffer.concat([Buffer.from([0x1d, 0x10, 0x4c, 0x7c]), length, rest]);
}

function u32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
