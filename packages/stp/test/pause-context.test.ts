import type { DecodedRecord } from '@tracehub/contracts';
import { describe, expect, it } from 'vitest';
import { Pkt, StpDecoder } from '../src/index.js';
import { StpStreamWriter } from '../src/stream-writer.js';

const MS = 1_000_000n;

function decode(pieces: Array<{ bytes: Uint8Array; hostNs: bigint; pauseNs?: bigint }>): DecodedRecord[] {
  const out: DecodedRecord[] = [];
  const decoder = new StpDecoder({ version: 1 });
  for (const p of pieces) decoder.push(p.bytes, { hostNs: p.hostNs, pauseNs: p.pauseNs }, (r) => out.push(r));
  decoder.end({ hostNs: (pieces.at(-1)?.hostNs ?? 0n) + MS }, (r) => out.push(r));
  return out;
}

describe('StpDecoder timing from the gateway', () => {
  it("takes pauses from the chunk's pauseNs, not from the gaps between receive times", () => {
    // An STP v1 stream cut into chunks 20 ms apart (the gateway's flush interval) with no
    // idle time on the link between them: no pause must be seen, so no resynchronisation.
    const bytes = streamBytes();
    const cut = Math.floor(bytes.length / 2);
    const continuous = decode([
      { bytes: bytes.subarray(0, cut), hostNs: 1000n * MS, pauseNs: 0n },
      { bytes: bytes.subarray(cut), hostNs: 1020n * MS, pauseNs: 0n },
    ]);
    const whole = decode([{ bytes, hostNs: 1020n * MS, pauseNs: 0n }]);
    expect(continuous.map((r) => [r.name, r.fields])).toEqual(whole.map((r) => [r.name, r.fields]));
    // Without pauseNs the 20 ms gap between receive times counts as a pause (offline files).
    const gapped = decode([
      { bytes: bytes.subarray(0, cut), hostNs: 1000n * MS },
      { bytes: bytes.subarray(cut), hostNs: 1020n * MS },
    ]);
    expect(gapped.map((r) => [r.name, r.fields])).not.toEqual(whole.map((r) => [r.name, r.fields]));
  });
});

function streamBytes(): Uint8Array {
  const w = new StpStreamWriter().packet(Pkt.MASTER, 0x10).packet(Pkt.V1_C8, 0x01);
  for (let i = 0; i < 8; i++) w.v1Data(4, 0x11223344 + i);
  return w.v1Data(4, 0x55667788, 0x01).bytes();
}
