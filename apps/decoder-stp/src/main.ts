// Process entry point of the STP decoder: the shared decoder service around the STP and SWD codecs.
import { runDecoderService } from '@tracehub/decoder-service';
import { stpDecoderFactory } from '@tracehub/decoders';

await runDecoderService({ name: 'decoder-stp', protocols: ['stp', 'swd'], factory: stpDecoderFactory });
