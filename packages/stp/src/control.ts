/**
 * Device-to-Fido control messages on channel 0x01 (spec §11): bit rate (binary, ID 0x04, and
 * obsolete ASCII, ID 0x03) and the two acknowledgements (0x01, 0x02), with the 4-byte header
 * `00 00 ID 00` or the 8-byte header `00 00 FF 00 01 01 ID 00`.
 */
export type ControlType = 'bit_rate' | 'bit_rate_ascii' | 'ack_length' | 'ack_data';

export interface ControlMessage {
  header_len: 4 | 8;
  id: number;
  /** Which byte order matched: the transport order, or each data packet reversed. */
  byte_order: 'as_sent' | 'swapped';
  type: ControlType;
  text?: string;
  bit_rate?: number;
}

export const CONTROL_CHANNEL = 0x01;

export const CONTROL_RECORD_NAMES: Readonly<Record<ControlType, string>> = Object.freeze({
  bit_rate: 'STP_CONTROL_BIT_RATE',
  bit_rate_ascii: 'STP_CONTROL_BIT_RATE_ASCII',
  ack_length: 'STP_CONTROL_ACK_LENGTH',
  ack_data: 'STP_CONTROL_ACK_DATA',
});

const TYPES: Record<number, ControlType> = { 1: 'ack_length', 2: 'ack_data', 3: 'bit_rate_ascii', 4: 'bit_rate' };

/**
 * Recognises a control message in a closed channel-1 buffer. `data` is in buffer order (after
 * the master's endianness swap); `runs` gives the data packet sizes as [size, count, ...]. All
 * packets have one size except a tail of strictly decreasing sizes, so the STM byte order can
 * be undone packet by packet: the transport order is tried first, then each packet reversed.
 */
export function detectControlMessage(
  data: Uint8Array,
  length: number,
  runs: readonly number[],
  littleEndianMaster: boolean,
): ControlMessage | null {
  if (length < 4 || runs.length === 0) return null;
  // Both headers start with 00, in one of the two byte orders: the first or the last byte of the
  // first packet. Most channel-1 traffic fails here, before any copy is made.
  if (data[0] !== 0 && data[runs[0] - 1] !== 0) return null;
  for (let i = 2; i < runs.length; i += 2) {
    if (runs[i] >= runs[i - 2] || (i > 2 && runs[i - 1] !== 1) || runs[i + 1] !== 1) return null;
  }
  const usesD64 = runs.some((size, i) => i % 2 === 0 && size === 8);
  // A little-endian master's buffer has every packet reversed already.
  const buffer = data.subarray(0, length);
  const reversed = reversePackets(buffer, runs);
  const transport = littleEndianMaster ? reversed : buffer;
  const swapped = littleEndianMaster ? buffer : reversed;
  return match(transport, 'as_sent', usesD64) ?? match(swapped, 'swapped', usesD64);
}

function reversePackets(bytes: Uint8Array, runs: readonly number[]): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let offset = 0;
  for (let r = 0; r < runs.length; r += 2) {
    const size = runs[r];
    for (let k = 0; k < runs[r + 1]; k++) {
      for (let i = 0; i < size; i++) out[offset + i] = bytes[offset + size - 1 - i];
      offset += size;
    }
  }
  return out;
}

function match(b: Uint8Array, order: 'as_sent' | 'swapped', usesD64: boolean): ControlMessage | null {
  if (b[0] !== 0 || b[1] !== 0 || b[3] !== 0) return null;
  let headerLen: 4 | 8;
  let id: number;
  if (b[2] === 0xff && b.length >= 8 && b[4] === 1 && b[5] === 1 && b[7] === 0) {
    headerLen = 8;
    id = b[6];
  } else {
    if (usesD64) return null;
    headerLen = 4;
    id = b[2];
  }
  const type = TYPES[id];
  if (type === undefined) return null;
  const payload = b.length - headerLen;
  const control: ControlMessage = { header_len: headerLen, id, byte_order: order, type };
  switch (type) {
    case 'ack_length':
    case 'ack_data':
      if (payload !== 0) return null;
      return control;
    case 'bit_rate':
      if (payload !== 4) return null;
      control.bit_rate =
        ((b[headerLen] << 24) | (b[headerLen + 1] << 16) | (b[headerLen + 2] << 8) | b[headerLen + 3]) >>> 0;
      return control;
    case 'bit_rate_ascii': {
      let end = b.length;
      while (end > headerLen && b[end - 1] === 0) end--;
      let text = '';
      for (let i = headerLen; i < end; i++) text += String.fromCharCode(b[i]);
      const rate = parseLg(text);
      if (rate === null) return null;
      control.text = text;
      control.bit_rate = rate;
      return control;
    }
  }
}

/** C `sscanf("%lg")`: leading white space, then the longest floating-point prefix. */
function parseLg(text: string): number | null {
  const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(text);
  return m === null ? null : Number.parseFloat(m[1]);
}
