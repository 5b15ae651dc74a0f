export { BlockCodec, BlockCodecError, compressBlock, decompressBlock, WRITE_CODEC } from './blocks/compression.js';
export { BadLinkBlockError, decodeLinkChunks, encodeLinkChunks, type LinkChunk } from './blocks/link-chunk-block.js';
export { connectDb, DatabaseConnectError } from './connect-db.js';
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
export { getLinkById, getRig, type LinkSummary, linkSummaries, listRigs } from './queries/fleet.js';
export { isSessionLinkComplete, type LinkLoss, sessionLinkChunks, sessionLinkLosses } from './queries/link-bytes.js';
export {
  escapeLike,
  filteredRecords,
  positionOf,
  type RecordFilter,
  type RecordPosition,
  type RecordsPage,
  type RecordsPageOptions,
  recordFilterWhere,
  recordsPage,
  type SortOrder,
} from './queries/records-page.js';
// Read queries (records pages, filters, ...) live in ./queries/*.ts and are exported below.
export {
  getSession,
  isSessionComplete,
  latestSession,
  type RecordRow,
  rowToTraceRecord,
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
  type TimelineBucket,
  type TimelineCounts,
  type TimelineItem,
  type TimelineStateChange,
  type TimelineWindow,
  timelineBuckets,
  timelineItems,
  timelineStateChanges,
} from './queries/timeline.js';
export { applyRetention, type HistoryRange, historyRange, type RetentionResult } from './retention.js';
export {
  type EnsureTextIndexesOptions,
  ensureTextIndexes,
  TEXT_INDEX_MODES,
  type TextIndexMode,
} from './text-index.js';
export { hostTimeOf, insertRecords } from './writes/insert-records.js';
export {
  type InsertRecordsJsonResult,
  insertRecordsJson,
  type SessionBatchSummary,
} from './writes/insert-records-json.js';
export { type InsertLinkChunksResult, insertLinkChunks, type SessionLinkChunks } from './writes/link-chunks.js';
export {
  getLinkByName,
  type LinkSettingsChange,
  type LinkSettingsChangeRow,
  linkSettingsChanges,
  setLinkSettings,
} from './writes/link-settings.js';
export { getLinkSettings, type LinkInput, upsertLink, upsertRig } from './writes/rigs.js';
export {
  addSessionCounts,
  markSessionEnded,
  type SessionCounts,
  type SessionInput,
  setSessionRecordTotal,
  upsertSession,
} from './writes/sessions.js';
