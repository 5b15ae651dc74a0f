import type { Migration, MigrationProvider } from 'kysely';
import * as initialSchema from './0001-initial-schema.js';
import * as sessionRecordTotal from './0002-session-record-total.js';
import * as textIndexPerPartition from './0003-text-index-per-partition.js';
import * as linkSettingsChanges from './0004-link-settings-changes.js';
import * as linkChunks from './0005-link-chunks.js';
import * as retention from './0006-retention.js';
import * as recordBlocks from './0007-record-blocks.js';
import * as sessionLinkSettings from './0008-session-link-settings.js';
import * as reporterEndpoints from './0009-reporter-endpoints.js';
import * as recordLosses from './0010-record-losses.js';
import * as watchRulesAlerts from './0011-watch-rules-alerts.js';
import * as blockTargetTime from './0012-block-target-time.js';
import * as recordBlockDigests from './0013-record-block-digests.js';

/**
 * Every migration, by name; Kysely runs them in name order. Add a new one as the next
 * numbered file and list it here (a static list works the same from src and dist).
 */
export const migrations: Record<string, Migration> = {
  '0001-initial-schema': initialSchema,
  '0002-session-record-total': sessionRecordTotal,
  '0003-text-index-per-partition': textIndexPerPartition,
  '0004-link-settings-changes': linkSettingsChanges,
  '0005-link-chunks': linkChunks,
  '0006-retention': retention,
  '0007-record-blocks': recordBlocks,
  '0008-session-link-settings': sessionLinkSettings,
  '0009-reporter-endpoints': reporterEndpoints,
  '0010-record-losses': recordLosses,
  '0011-watch-rules-alerts': watchRulesAlerts,
  '0012-block-target-time': blockTargetTime,
  '0013-record-block-digests': recordBlockDigests,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
