export { DecoderConfigSchema, type DecoderServiceDefinition, runDecoderService } from './decoder-service.js';
