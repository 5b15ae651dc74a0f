import type { Protocol } from '@tracehub/contracts';
import type { DecoderFactory } from '@tracehub/decoder-service';
import { qsDecoderFactory } from './qs-decoder-factory.js';
import { stpDecoderFactory } from './stp-decoder-factory.js';

/** The factory that decodes links of `protocol` (STP and SWD share one). */
export function decoderFactoryFor(protocol: Protocol): DecoderFactory {
  return protocol === 'qs' ? qsDecoderFactory : stpDecoderFactory;
}
