export { stpDecoderFactory, stpOptionsFrom } from './stp-decoder-factory.js';
