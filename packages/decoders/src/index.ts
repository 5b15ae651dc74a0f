export { decoderFactoryFor } from './factories.js';
export { qsDecoderFactory, qsOptionsFrom } from './qs-decoder-factory.js';
export { RedecodeError, type RedecodeOptions, type RedecodeResult, redecodeSession } from './redecode.js';
export { stpDecoderFactory, stpOptionsFrom } from './stp-decoder-factory.js';
export {
  qsTargetClockRule,
  STP_TARGET_CLOCK_RULE,
  type TargetClockRule,
  TargetTimeDecoder,
} from './target-time-decoder.js';
