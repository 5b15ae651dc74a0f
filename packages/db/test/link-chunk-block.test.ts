import { describe, expect, it } from 'vitest';
import { BadLinkBlockError, decodeLinkChunks, encodeLinkChunks, type LinkChunk } from '../src/index.js';

const bytes = (...b: number[]) => Buffer.from(b);

describe('link chunk blocks', () => {
  it('keep each chunk with its receive time, loss, end, pause and the stretches between its pauses', () => {
    const chunks: LinkChunk[] = [
      { chunk: 0, recvNs: 1_000n, lost: 0, eos: false, data: bytes(1, 2, 3) },
      {
        chunk: 1,
        recvNs: 9_000n,
        lost: 7,
        eos: false,
        pauseNs: 40_000n,
        segments: [
          { offset: 0, pauseNs: 40_000n, recvNs: 2_000n },
          { offset: 2, pauseNs: 3_000_000n, recvNs: 5_000n },
          { offset: 5, pauseNs: 150_000_000n, recvNs: 9_000n },
        ],
        data: bytes(4, 5, 6, 7, 8, 9),
      },
      { chunk: 2, recvNs: 10_000n, lost: 0, eos: true, pauseNs: 0n, data: bytes() },
    ];
    const decoded = decodeLinkChunks(encodeLinkChunks(chunks));
    expect(decoded.map((c) => ({ ...c, data: [...c.data] }))).toEqual(chunks.map((c) => ({ ...c, data: [...c.data] })));
  });

  it('says so when a block is cut inside the stretches of a chunk', () => {
    const block = encodeLinkChunks([
      {
        chunk: 0,
        recvNs: 1n,
        lost: 0,
        eos: false,
        segments: [
          { offset: 0, pauseNs: 1n, recvNs: 1n },
          { offset: 1, pauseNs: 1n, recvNs: 1n },
        ],
        data: bytes(1, 2),
      },
    ]);
    expect(() => decodeLinkChunks(block.subarray(0, 4 + 32 + 30))).toThrow(BadLinkBlockError);
  });
});
