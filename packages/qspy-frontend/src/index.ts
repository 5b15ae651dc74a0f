export {
  type FrontEndEvent,
  type FrontEndPeer,
  type FrontEndStatus,
  QspyFrontEnd,
  type QspyFrontEndOptions,
} from './front-end.js';
export { NameIndex, QS_CMD_ENUM_GROUP } from './name-index.js';
export { Channel, FePacket, Lines, RxId } from './protocol.js';
export {
  MAX_RX_FRAME_BYTES,
  QsTargetLink,
  type QsTargetLinkOptions,
  type SendFailure,
  type SentFrame,
  type TargetRecordListener,
} from './target-link.js';
export { FrontEndPort, type FrontEndPortOptions, parseFrontEndAddress } from './udp-port.js';
