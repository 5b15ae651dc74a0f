import { busPrefixSetting, databaseUrlSetting, natsUrlSetting, Type } from '@tracehub/service-kit';

export const DecoderConfigSchema = Type.Object({
  NATS_URL: natsUrlSetting,
  DATABASE_URL: databaseUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
});
