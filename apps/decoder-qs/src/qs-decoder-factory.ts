import type { DecoderFactory, LinkSettings } from '@tracehub/decoder-service';
import { QS_DEFAULT_OPTIONS, QsDecoder, type QsDecoderOptions, resolveOptions } from '@tracehub/qs';

type QsOption = keyof QsDecoderOptions;

/**
 * QS options of a link from its settings (`links.settings`): the sizes used until the target
 * announces its own (qspy's -O, -F, -T, ... options), named as in `QsDecoderOptions`. A value
 * the codec would refuse (a size of 3, say) is left out rather than let every chunk of the link
 * fail: the link then decodes with the default for that size.
 */
export function qsOptionsFrom(settings: LinkSettings): QsDecoderOptions {
  const options: QsDecoderOptions = {};
  for (const key of Object.keys(QS_DEFAULT_OPTIONS) as QsOption[]) {
    const value = settings[key];
    if (typeof value !== 'number') continue;
    try {
      resolveOptions({ [key]: value });
      options[key] = value;
    } catch {
      // Refused by the codec: keep the default.
    }
  }
  return options;
}

export const qsDecoderFactory: DecoderFactory = {
  create: (_link, settings) => new QsDecoder(qsOptionsFrom(settings)),
  restore: (_link, settings, snapshot) => QsDecoder.restore(snapshot, qsOptionsFrom(settings)),
};
