export { BlockCodec, BlockCodecError, compressBlock, decompressBlock, WRITE_CODEC } from './blocks/compression.js';
export { BadLinkBlockError, decodeLinkChunks, encodeLinkChunks, type LinkChunk } from './blocks/link-chunk-block.js';
export {
  BadRecordBlockError,
  type BlockPlace,
  decodeRecordBlock,
  type EncodedRecordBlock,
  encodeJsonBlock,
  encodeRecordBlock,
} from './blocks/record-block.js';
export { decodeStoredDigest, encodeStoredDigest } from './blocks/record-digest.js';
export { type RecordRow, recordToRow, rowToTraceRecord } from './blocks/record-row.js';
export { connectDb, DatabaseConnectError, isDatabaseReachable } from './connect-db.js';
export { type CreateDbOptions, createDb } from './create-db.js';
export type * from './database.js';
export { migrations } from './migrations/index.js';
export { type MigrateOptions, MigrationError, migrateDown, migrateToLatest, migrateToNothing } from './migrator.js';
export {
  type EnsurePartitionsOptions,
  ensurePartitions,
  listPartitions,
  PARTITIONED_TABLES,
  type PartitionedTable,
  partitionName,
} from './partitions.js';
export { type PostgresFailure, postgresFailureOf } from './postgres-errors.js';
export {
  type PostgresRetryOptions,
  type PostgresRetryResult,
  retryPostgres,
} from './postgres-retry.js';
export {
  blockRecords,
  DEFAULT_SCAN_LIMIT_BYTES,
  ScanBudget,
  ScanLimitError,
} from './queries/block-reader.js';
export { getLinkById, getRig, type LinkSummary, linkSummaries, listRigs } from './queries/fleet.js';
export { isSessionLinkComplete, type LinkLoss, sessionLinkChunks, sessionLinkLosses } from './queries/link-bytes.js';
export { linkBytesKeptSince } from './queries/link-bytes-kept.js';
export {
  bucketWidthNs,
  type LinkRateSeries,
  type RecordRatesWindow,
  recordRates,
} from './queries/record-rates.js';
export {
  downsampleSeries,
  type RecordSeriesOptions,
  type SeriesColumn,
  type SeriesPoint,
  sessionRecordSeries,
} from './queries/record-series.js';
export {
  filteredRecords,
  positionOf,
  type RecordFilter,
  type RecordPosition,
  type RecordsPage,
  type RecordsPageOptions,
  recordMatchOf,
  recordsPage,
  type SortOrder,
} from './queries/records-page.js';
export { forEachSessionDigest, forEachSessionRecord, type SessionBlockDigest } from './queries/session-blocks.js';
export {
  type ChannelCounts,
  type MasterCounts,
  type SessionChannels,
  type SessionChannelsOptions,
  sessionChannels,
} from './queries/session-channels.js';
// Read queries (records pages, filters, ...) live in ./queries/*.ts and are exported below.
export {
  getSession,
  isSessionComplete,
  latestSession,
  sessionRecords,
  sessionRecordsPage,
} from './queries/session-records.js';
export {
  type SessionFilter,
  type SessionPosition,
  sessionDictionaries,
  sessionsPage,
} from './queries/sessions-list.js';
export {
  type SessionStateMachines,
  type SignalCount,
  type StateCounts,
  type StateMachine,
  type StateMachinesOptions,
  sessionStateMachines,
  type TransitionCount,
} from './queries/state-machines.js';
export {
  sessionTargetSegments,
  sessionTargetWindow,
  type TargetSegment,
  type TargetWindowOptions,
} from './queries/target-time.js';
export {
  forEachTargetPoint,
  sessionTargetTimeline,
  type TargetLaneCounts,
  type TargetPoint,
  type TargetPointVisitor,
  type TargetTimeline,
  type TargetTimelineItem,
  type TargetTimelineOptions,
  type TargetWindow,
} from './queries/target-timeline.js';
export {
  type TimelineBucket,
  type TimelineCounts,
  type TimelineItem,
  type TimelineStateChange,
  type TimelineWindow,
  timelineBuckets,
  timelineItems,
  timelineRecordsAtLeast,
  timelineStateChanges,
  trackOf,
} from './queries/timeline.js';
export { applyRetention, type HistoryRange, historyRange, type RetentionResult } from './retention.js';
export {
  type AlertFiring,
  type AlertListFilter,
  acknowledgeAlert,
  fireAlert,
  firingAlertCounts,
  firingAlertsOf,
  latestLinkSessions,
  latestTargetBuilds,
  listAlerts,
  recordsRefusedSince,
  resolveAlert,
  resolveRuleAlerts,
} from './watch/alerts.js';
export {
  claimWatchRules,
  countWatchRules,
  deleteWatchRule,
  disableWatchRule,
  insertWatchRule,
  listWatchRules,
  type NewWatchRule,
  releaseWatchRules,
  renewWatchRuleLeases,
  type SharedWatchRule,
  silenceWatchRule,
  updateWatchRule,
} from './watch/watch-rules.js';
export type { AlertRow, WatchRuleRow, WatchTables } from './watch/watch-tables.js';
export { type CompactResult, compactRecordBlocks } from './writes/compact-record-blocks.js';
export { insertRecords, insertRecordsJson } from './writes/insert-records.js';
export { type InsertLinkChunksResult, insertLinkChunks, type SessionLinkChunks } from './writes/link-chunks.js';
export {
  getLinkByName,
  type LinkSettingsChange,
  type LinkSettingsChangeRow,
  linkSettingsChanges,
  setLinkSettings,
} from './writes/link-settings.js';
export {
  BadRecordsError,
  checkRecord,
  groupBySession,
  insertRecordBlocks,
  MAX_BLOCK_RECORDS,
  MAX_BLOCK_SPAN_NS,
  pieceJson,
  type RecordPiece,
  type SessionBatchSummary,
  type SessionRecords,
  type StoreRecordsResult,
  storeRecords,
  storeRecordsJson,
} from './writes/record-blocks.js';
export { type RecordLoss, type RecordLossRow, recordLoss, sessionRecordLosses } from './writes/record-losses.js';
// Reporter endpoints and their leases, as the PalmTrace bridge shares them out: the module whole.
export * from './writes/reporter-endpoints.js';
export { getLinkSettings, getLinksSettings, type LinkInput, upsertLink, upsertRig } from './writes/rigs.js';
export { setSessionLinkSettings } from './writes/session-link-settings.js';
export {
  addSessionCounts,
  addSessionCountsMany,
  lockSessions,
  markSessionEnded,
  type SessionCounts,
  type SessionInput,
  setSessionRecordTotal,
  upsertSession,
} from './writes/sessions.js';
