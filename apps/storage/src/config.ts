import {
  busPrefixSetting,
  databaseUrlSetting,
  natsConnectionSettings,
  streamSettings,
  Type,
} from '@tracehub/service-kit';

export const StorageConfigSchema = Type.Object({
  ...natsConnectionSettings,
  DATABASE_URL: databaseUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
  ...streamSettings,
  STORAGE_BATCH_RECORDS: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 5000,
    description: 'records per transaction, 1..100000',
  }),
  STORAGE_BATCH_MS: Type.Integer({
    minimum: 1,
    maximum: 60_000,
    default: 50,
    description: 'longest a batch waits to fill, ms',
  }),
  STORAGE_MAX_IN_FLIGHT: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 256,
    description: 'unacked record messages at most',
  }),
  STORAGE_WRITERS: Type.Integer({
    minimum: 1,
    maximum: 32,
    default: 2,
    description: 'transactions written at once, 1..32',
  }),
  STORAGE_ACK_WAIT_MS: Type.Integer({
    minimum: 1000,
    maximum: 3_600_000,
    default: 30_000,
    description:
      'how long a delivered record message may stay unacknowledged before JetStream delivers it again (to any storage), ms',
  }),
  STORAGE_LINK_BATCH_MS: Type.Integer({
    minimum: 1,
    maximum: 60_000,
    default: 250,
    description: "longest a batch of the link's raw bytes waits to fill, ms (they are not queried live)",
  }),
  STORAGE_RETENTION_DAYS: Type.Integer({
    minimum: 0,
    maximum: 36_500,
    default: 0,
    description:
      'days of history kept (records and link bytes), applied by dropping whole daily partitions; 0 keeps everything',
  }),
  STORAGE_COMPACT_RECORDS: Type.Integer({
    minimum: 100,
    maximum: 50_000,
    default: 2000,
    description:
      'records per block that compaction merges small blocks up to (a slow link writes small blocks; merged, they take less room)',
  }),
  STORAGE_COMPACT_INTERVAL_MS: Type.Integer({
    minimum: 0,
    maximum: 3_600_000,
    default: 5000,
    description: 'how often storage merges settled small record blocks, ms; 0 never',
  }),
  STORAGE_PARTITION_DAYS_AHEAD: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 7,
    description: 'daily partitions made ahead',
  }),
});

/** A setting's default, as the schema above gives it. */
function defaultOf(name: keyof typeof StorageConfigSchema.properties): number {
  return StorageConfigSchema.properties[name].default as number;
}

/** The stores' defaults (for a store made without the service, as in tests): the settings' own, written once. */
export const storageDefaults = {
  batchRecords: defaultOf('STORAGE_BATCH_RECORDS'),
  batchMs: defaultOf('STORAGE_BATCH_MS'),
  maxInFlight: defaultOf('STORAGE_MAX_IN_FLIGHT'),
  writers: defaultOf('STORAGE_WRITERS'),
  ackWaitMs: defaultOf('STORAGE_ACK_WAIT_MS'),
  linkBatchMs: defaultOf('STORAGE_LINK_BATCH_MS'),
} as const;
