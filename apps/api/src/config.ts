import { busPrefixSetting, databaseUrlSetting, natsUrlSetting, Type } from '@tracehub/service-kit';

export const ApiConfigSchema = Type.Object({
  NATS_URL: natsUrlSetting,
  DATABASE_URL: databaseUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
});
