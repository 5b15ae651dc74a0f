import { describe, expect, it } from 'vitest';
import { QsDeframer, QsFrameError, type QsFrameSink } from '../src/deframer.js';

interface Seen {
  frames: { bytes: number[]; gapFrom: number }[];
  errors: { error: number; bytes: number[] }[];
}

function deframe(chunks: number[][]): Seen {
  const seen: Seen = { frames: [], errors: [] };
  const sink: QsFrameSink = {
    frame: (buf, start, len, gapFrom) => seen.frames.push({ bytes: [...buf.subarray(start, start + len)], gapFrom }),
    frameError: (error, buf, start, len) => seen.errors.push({ error, bytes: [...buf.subarray(start, start + len)] }),
  };
  const d = new QsDeframer(sink);
  for (const c of chunks) d.push(new Uint8Array(c));
  return seen;
}

describe('QsDeframer', () => {
  it('takes the QS_EMPTY frame of every stream start (spec 2.3)', () => {
    const seen = deframe([[0x01, 0x00, 0xfe, 0x7e]]);
    expect(seen.frames).toEqual([{ bytes: [0x01, 0x00, 0xfe], gapFrom: -1 }]);
  });

  it('un-escapes the sequence number and the checksum (spec 14, dpp_qv 2918 and 5509)', () => {
    const seen = deframe([
      [0x7d, 0x5d, 0x1d, 0xcd, 0x3d, 0x17, 0x3d, 0x04, 0x00, 0x01, 0x04, 0xfe, 0x7e],
      [0xf0, 0x08, 0x04, 0x40, 0xab, 0x3d, 0x0b, 0x00, 0x00, 0xe7, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0],
      [0x1c, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7d],
      [0x5d, 0x7e],
    ]);
    expect(seen.errors).toEqual([]);
    expect(seen.frames[0].bytes.slice(0, 2)).toEqual([0x7d, 0x1d]);
    expect(seen.frames[1].bytes.at(-1)).toEqual(0x7d);
    expect(seen.frames[1].gapFrom).toBe(0x7d);
  });

  it('reports a bad checksum, a too-short frame and a sequence gap', () => {
    const seen = deframe([[0x01, 0x00, 0xfe, 0x7e, 0x02, 0x00, 0x00, 0x7e, 0xff, 0x7e, 0x05, 0x46, 0xb4, 0x7e]]);
    expect(seen.errors.map((e) => e.error)).toEqual([QsFrameError.BAD_CHECKSUM, QsFrameError.TOO_SHORT]);
    expect(seen.frames.map((f) => f.gapFrom)).toEqual([-1, 1]);
  });

  it('treats an escape before the flag as data, merging two frames', () => {
    const seen = deframe([[0x01, 0x00, 0xfe, 0x7e, 0x02, 0x00, 0x7d, 0x7e, 0x03, 0x00, 0xfc, 0x7e]]);
    expect(seen.frames).toHaveLength(1);
    expect(seen.errors).toEqual([{ error: QsFrameError.BAD_CHECKSUM, bytes: [0x02, 0x00, 0x5e, 0x03, 0x00, 0xfc] }]);
  });

  it('caps a frame at 512 bytes and says so', () => {
    const seen = deframe([new Array(600).fill(0x11), [0x7e]]);
    expect(seen.errors[0]).toEqual({ error: QsFrameError.TOO_LONG, bytes: new Array(512).fill(0x11) });
    expect(seen.errors[1].error).toBe(QsFrameError.BAD_CHECKSUM);
    expect(seen.errors[1].bytes).toHaveLength(87);
  });
});
