export { qsDecoderFactory, qsOptionsFrom } from './qs-decoder-factory.js';
