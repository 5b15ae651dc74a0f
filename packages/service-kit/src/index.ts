// Apps build their config schemas with the same TypeBox the kit validates with.
export { type Static, type TObject, Type } from '@sinclair/typebox';
export {
  busPrefixSetting,
  ConfigError,
  type ConfigProblem,
  databaseUrlSetting,
  describeExpected,
  loadConfig,
  natsConnectionFrom,
  natsConnectionSettings,
  natsUrlSetting,
  secretSetting,
  streamLimitsFrom,
  streamSettings,
} from './config.js';
export { HealthServer, type HealthServerOptions, type ReadinessCheck } from './health-server.js';
export { createLogger, describeError, LOG_LEVELS, type Logger, type LoggerOptions } from './logger.js';
export { ServiceMetrics, type StreamLevel, streamLevelMetrics } from './metrics.js';
export {
  EXIT_CONFIG,
  EXIT_FAILURE,
  EXIT_OK,
  type RunningService,
  type RunOptions,
  runService,
  type ServiceBaseConfig,
  ServiceBaseConfigSchema,
  type ServiceContext,
  type ServiceDefinition,
  type ServiceHandle,
} from './run-service.js';
