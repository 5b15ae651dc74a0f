export { qsDecoderFactory, qsOptionsFrom } from '@tracehub/decoders';
