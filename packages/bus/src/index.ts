export type { JsMsg } from '@nats-io/jetstream';
export type { LinkAddress } from '@tracehub/contracts';
export { BusConnectError, type BusOptions, connectBus } from './connect.js';
export {
  DECODER_CHUNKS_IN_FLIGHT,
  type DurableConfig,
  decoderConsumerConfig,
  ensureDurable,
  ensureLinkConsumers,
  ensureRecordConsumers,
  storageRawConsumerConfig,
  storageRecordConsumerConfig,
} from './consumers.js';
export {
  type ControlAsk,
  type ControlFieldError,
  type ControlHandlers,
  type ControlQs,
  type ControlQsCommand,
  type ControlQsSizes,
  type ControlServer,
  type ControlState,
  type ControlTarget,
  ControlTimeoutError,
  type ControlWrite,
  MAX_ANSWER_TIMEOUT_MS,
  MAX_CONTROL_BYTES,
  NoGatewayError,
  requestControl,
  serveControl,
} from './control.js';
export { isJetStreamNotReady, isStreamFullError } from './errors.js';
export {
  consumeLinkChunks,
  type LinkChunksHandle,
  type LinkChunksOptions,
  nextChunkFrom,
  type StoredChunk,
} from './link-chunks.js';
export { announceLinkStarted, watchLinksStarted } from './link-started.js';
export {
  consumeInOrder,
  ensureOrderedConsumer,
  type OrderedConsumerHandle,
  type OrderedConsumerOptions,
} from './ordered-consumer.js';
export {
  BadChunkHeadersError,
  publishRawChunk,
  type RawChunk,
  readRawChunkMeta,
} from './raw-chunks.js';
export {
  BadRecordMessageError,
  ERRORS_HEADER,
  isCompressedPayload,
  MAX_BATCH_PAYLOAD,
  PART_HEADER,
  PARTS_HEADER,
  PAYLOAD_HEADER,
  type PreparedRecordBatch,
  parseRecordBatch,
  parseRecordMessage,
  prepareRecordBatch,
  publishRecordBatch,
  RECORDS_BYTES_HEADER,
  RECORDS_HEADER,
  type RecordBatchMeta,
  type RecordMessage,
  type RecordsPayload,
  readRecordBatchMeta,
  readRecordMessage,
  recordPayloadJson,
  recordsJsonOf,
  SESSION_RECORDS_HEADER,
  SUMMARY_HEADER,
  sendRecordBatch,
  ZSTD_RECORDS_PAYLOAD,
} from './record-batches.js';
export { consumeStorageRecords, type StorageConsumerOptions } from './storage-consumer.js';
export {
  defaultTopologyLimits,
  ensureTopology,
  removeTopology,
  type StreamFill,
  StreamUpgradeError,
  streamFill,
  type TopologyLimits,
} from './topology.js';
export type { Bus } from './types.js';
