import { busPrefixSetting, databaseUrlSetting, natsUrlSetting, Type } from '@tracehub/service-kit';

export const StorageConfigSchema = Type.Object({
  NATS_URL: natsUrlSetting,
  DATABASE_URL: databaseUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
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
    default: 2000,
    description: 'unacked record messages at most',
  }),
  STORAGE_PARTITION_DAYS_AHEAD: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 7,
    description: 'daily partitions made ahead',
  }),
});
