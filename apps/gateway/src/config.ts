import { busPrefixSetting, natsUrlSetting, Type } from '@tracehub/service-kit';

export const GatewayConfigSchema = Type.Object({
  NATS_URL: natsUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
  /** The links this gateway reads; empty: none (the process only holds its bus connection). */
  TRACEHUB_LINKS: Type.String({ default: '', description: 'the links this gateway reads (empty: none)' }),
});
