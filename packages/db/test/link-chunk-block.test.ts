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

  it('keep a marker set on the live link with the empty chunk that carried it, in its place between the bytes', () => {
    const chunks: LinkChunk[] = [
      { chunk: 0, recvNs: 1_000n, lost: 0, eos: false, data: bytes(1, 2, 3) },
      {
        chunk: 1,
        recvNs: 2_000n,
        lost: 0,
        eos: false,
        marker: { kind: 'user', comment: 'ici, « là »' },
        data: bytes(),
      },
      {
        chunk: 2,
        recvNs: 3_000n,
        lost: 0,
        eos: false,
        pauseNs: 5n,
        segments: [
          { offset: 0, pauseNs: 5n, recvNs: 2_500n },
          { offset: 1, pauseNs: 600_000_000n, recvNs: 3_000n },
        ],
        marker: { kind: 'timeBase', offsetNs: '-1000' },
        data: bytes(4, 5),
      },
      { chunk: 3, recvNs: 4_000n, lost: 0, eos: true, data: bytes(6) },
    ];
    const block = encodeLinkChunks(chunks);
    const decoded = decodeLinkChunks(block);
    expect(decoded.map((c) => ({ ...c, data: [...c.data] }))).toEqual(chunks.map((c) => ({ ...c, data: [...c.data] })));
    // Cut inside the second chunk's marker: said so, not read as bytes.
    expect(() => decodeLinkChunks(block.subarray(0, 4 + 4 * 32 + 3 + 10))).toThrow(BadLinkBlockError);
  });
});
