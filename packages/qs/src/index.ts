export {
  QS_DEFAULT_OPTIONS,
  QSPY_SIZE_OPTIONS,
  type QsDecoderOptions,
  type QsTargetConfig,
  resolveOptions,
} from './config.js';
export {
  QS_OBJ_KIND_NAMES,
  QS_RECORD_NAMES,
  QS_RX_NAMES,
  QS_STATE_RECORD_IDS,
  QsDecoderRecordId,
  QsObjKind,
  QsRecordId,
  QsRecordName,
  QsRxId,
} from './constants.js';
export {
  dictionaryFileAfter,
  dictionaryFileOfRecords,
  QsDecoder,
  type QsDecoderStats,
  type StoredFrameRecord,
} from './decoder.js';
export { QsDeframer, QsFrameError, type QsFrameSink } from './deframer.js';
export {
  DictionaryFileError,
  formatDictionaryFile,
  loadDictionaryFile,
  parseDictionaryFile,
  type QsDictionaryFile,
} from './dictionary-file.js';
export { QS_RECORD_GROUPS, type QsRecordGroup, qsRecordGroup } from './record-groups.js';
export {
  encodeFrame,
  escapedFrameLength,
  escapeFrame,
  filterBitmap,
  QsFrameBuilder,
  QsPayloadWriter,
  QsRxEncoder,
  type QsRxSizes,
  qsTextBytes,
  writeEscapedFrame,
} from './serializer.js';
export { QsStreamSegments } from './stream-segments.js';
export { TextBlocks } from './text-blocks.js';
