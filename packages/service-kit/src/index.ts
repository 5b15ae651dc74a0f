// Apps build their config schemas with the same TypeBox the kit validates with.
export { type Static, type TObject, Type } from '@sinclair/typebox';
export {
  busPrefixSetting,
  ConfigError,
  type ConfigProblem,
  databaseUrlSetting,
  describeExpected,
  describeProblem,
  fileSetting,
  loadConfig,
  natsConnectionFrom,
  natsConnectionSettings,
  natsUrlSetting,
  secretSetting,
  streamLimitsFrom,
  streamSettings,
} from './config.js';
export { missingFileProblems, portInUseProblem, portProblem } from './config-checks.js';
export { healthRoutes, metricsRoute } from './health-routes.js';
export { HealthServer, type HealthServerOptions } from './health-server.js';
export { createLogger, describeError, LOG_LEVELS, type Logger, type LoggerOptions } from './logger.js';
export { LINK_LABELS, linkLabels, type Sample, type SampledConfiguration, ServiceMetrics } from './metrics.js';
export { exitIfNodeTooOld, MIN_NODE_MAJOR, oldNodeProblem } from './node-version.js';
export { Readiness, type ReadinessCheck, type ReadinessCheckOptions, type ReadinessReport } from './readiness.js';
export {
  CHECK_CONFIG_ONLY_VARIABLE,
  CONFIG_CHECK_REPORT,
  type ConfigCheckReport,
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
  SUPERVISOR_PID_VARIABLE,
} from './run-service.js';
export {
  connectServiceBus,
  connectServiceDb,
  ensureServiceStreams,
  openServiceDb,
  type ServiceDb,
  type ServiceDbOptions,
} from './service-connections.js';
