export { type App, type AppDeps, buildApp } from './app.js';
export {
  type ApiConfig,
  ApiConfigSchema,
  type ApiSettings,
  apiSettingsFrom,
  parseApiTokens,
  type Scope,
} from './config.js';
export { decodeRecordCursor, encodeRecordCursor } from './cursor.js';
export { EXPORT_FORMATS, type ExportFormat, exportChunks, rawBytes } from './exports/export-formats.js';
export { type LiveClient, LiveHub, type LiveSink } from './live/live-hub.js';
export { type SseEvent, SseEventReader } from './live/sse.js';
export { type SequenceDiagram, type SequenceStep, sequenceDiagram } from './sequence-diagram.js';
