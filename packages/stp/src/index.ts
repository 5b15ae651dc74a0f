export * from './capture-config.js';
export * from './constants.js';
export * from './control.js';
export type { DecodeResult } from './decode-result.js';
export * from './fixture-format.js';
export { bytesToHex, hexToBytes } from './hex.js';
export * from './ost.js';
export { type PacketObserver, ParserState, StpPacketParser, type StpPacketParserOptions } from './packet-parser.js';
export { PKT_NAME, Pkt } from './packets.js';
export * from './phonet.js';
export {
  DEFAULT_LIMITS,
  type OutputProtocol,
  type ReassemblerLimits,
  type ReassemblySink,
  StpReassembler,
} from './reassembler.js';
export { StpDecoder, type StpDecoderOptions } from './stp-decoder.js';
export { StpStreamWriter } from './stream-writer.js';
export { SwdDecoder, type SwdDecoderOptions } from './swd-decoder.js';
export * from './swd-deframer.js';
export * from './timestamp.js';
