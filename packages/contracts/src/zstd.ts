import zlib from 'node:zlib';

/** What tracehub uses of Node's zstd: record payloads on the bus and stored blocks. */
export interface NodeZstd {
  /** `data` as one zstd frame, compressed at `level`. */
  compress(data: Uint8Array, level: number): Buffer;
  decompress(data: Uint8Array): Buffer;
}

interface ZlibWithZstd {
  zstdCompressSync(data: Uint8Array, options?: { params?: Record<number, number> }): Buffer;
  zstdDecompressSync(data: Uint8Array): Buffer;
  constants: Record<string, number>;
}

const zlibZstd =
  typeof (zlib as unknown as Partial<ZlibWithZstd>).zstdCompressSync === 'function'
    ? (zlib as unknown as ZlibWithZstd)
    : undefined;

/** Params of each level, made once: the compress call sits on the hot path. */
const levelParams = new Map<number, Record<number, number>>();

function paramsOf(z: ZlibWithZstd, level: number): Record<number, number> {
  let params = levelParams.get(level);
  if (!params) levelParams.set(level, (params = { [z.constants.ZSTD_c_compressionLevel]: level }));
  return params;
}

/**
 * Node's zstd (`node:zlib`, Node 22.15 and later), or `undefined` on a Node without it: a
 * writer then falls back (deflate) or leaves data as it is, and a reader says which Node to use.
 */
export const nodeZstd: NodeZstd | undefined = zlibZstd && {
  compress: (data, level) => zlibZstd.zstdCompressSync(data, { params: paramsOf(zlibZstd, level) }),
  decompress: (data) => zlibZstd.zstdDecompressSync(data),
};
