/**
 * What decoding one output message (OST or PhoNet) at an offset gives: the message and its size
 * in bytes, `incomplete` when more bytes are needed, or `invalid` with the reason. Never a throw.
 */
export type DecodeResult<M> =
  | { status: 'ok'; message: M; size: number }
  | { status: 'incomplete' }
  | { status: 'invalid'; reason: string };
