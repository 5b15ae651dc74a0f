export {
  DEFAULT_PALMTRACE_SETTINGS,
  type PalmTraceBridgeSettings,
  type PalmTraceConfig,
  palmTraceConfigProperties,
  palmTraceSettingsFrom,
} from './bridge-settings.js';
export {
  type ModuleTable,
  type ReplayRequest,
  type ReporterEndpointInput,
  ReporterEndpointSchema,
  type ReporterFilter,
  type ReporterOptions,
} from './endpoint-schema.js';
export { PalmTraceBridge } from './palmtrace-bridge.js';
export type { ListenerStatus } from './palmtrace-listener.js';
export { type PalmTraceBridgeOptions, palmTraceBridge } from './palmtrace-plugin.js';
export {
  DEFAULT_TICKS_PER_MS,
  RecordMessageEncoder,
  rigNumber,
  threadIdOf,
  timestampMsOf,
} from './record-messages.js';
export type { ReporterStatus } from './reporter-endpoint.js';
