// Process entry point of the QS decoder: the shared decoder service around the QS codec.
import { runDecoderService } from '@tracehub/decoder-service';
import { qsDecoderFactory } from '@tracehub/decoders';

await runDecoderService({ name: 'decoder-qs', protocols: ['qs'], factory: qsDecoderFactory });
