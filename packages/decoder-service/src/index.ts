export { CheckpointConflictError, CheckpointStore, type DecoderCheckpoint } from './checkpoints.js';
export { DecoderConfigSchema, type DecoderServiceDefinition, runDecoderService } from './decoder-service.js';
export { DecoderWorker } from './decoder-worker.js';
export { LinkLease, leaseKey } from './lease.js';
export { LinkSettingsReader, type ReadLinksSettings } from './link-settings-reader.js';
export type { ChunkDecoded, DecoderFactory, DecoderWorkerOptions, LinkSettings } from './types.js';
