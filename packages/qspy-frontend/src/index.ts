export {
  type BuiltCommand,
  buildCommand,
  CommandFieldError,
  type CommandSizes,
  type NumberText,
  OBJECT_KINDS,
  QS_COMMAND_NAMES,
  QS_ID_GROUP_MASKS,
  type QsCommand,
  type QsCommandRequest,
  RECORD_GROUP_MASKS,
} from './commands.js';
export {
  type FrontEndEvent,
  type FrontEndPeer,
  type FrontEndStatus,
  QspyFrontEnd,
  type QspyFrontEndOptions,
} from './front-end.js';
export {
  type AnswerOutcome,
  type AnswerRecord,
  CommandRejected,
  type CommandResult,
  QsLinkControl,
} from './link-control.js';
export {
  type FrontEndOption,
  QsLinkPoint,
  type QsLinkPointOptions,
  type QsLinkPointStatus,
  takeFrontEndOption,
} from './link-point.js';
export { NameIndex, QS_CMD_ENUM_GROUP } from './name-index.js';
export { Channel, FePacket, Lines } from './protocol.js';
export { ScriptedTarget, type ScriptedTargetOptions } from './scripted-target.js';
export {
  MAX_RX_FRAME_BYTES,
  QsTargetLink,
  type QsTargetLinkOptions,
  type SendFailure,
  type SentFrame,
  type TargetRecordListener,
} from './target-link.js';
export { FrontEndPort, type FrontEndPortOptions, parseFrontEndAddress } from './udp-port.js';
