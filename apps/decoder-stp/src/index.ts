export { stpDecoderFactory, stpOptionsFrom } from '@tracehub/decoders';
