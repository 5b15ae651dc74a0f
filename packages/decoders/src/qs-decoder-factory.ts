import type { DecoderFactory, LinkSettings } from '@tracehub/decoder-service';
import {
  parseDictionaryFile,
  QS_DEFAULT_OPTIONS,
  QsDecoder,
  type QsDecoderOptions,
  type QsDictionaryFile,
  resolveOptions,
} from '@tracehub/qs';
import { qsTargetClockRule, TargetTimeDecoder } from './target-time-decoder.js';

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

/** The link's qspy `.dic` (setting `dictionaries`); a text qspy would not read throws (the worker then decodes with defaults). */
function dictionaryFileOf(settings: LinkSettings): QsDictionaryFile | undefined {
  const text = settings.dictionaries;
  return typeof text === 'string' && text !== '' ? parseDictionaryFile(text) : undefined;
}

/** The clock of a QS link's records: its timestamps as wide as the link's `timeSize` (qspy -T) until a target info says. */
const clockRuleOf = (settings: LinkSettings) =>
  qsTargetClockRule(qsOptionsFrom(settings).timeSize ?? QS_DEFAULT_OPTIONS.timeSize);

export const qsDecoderFactory: DecoderFactory = {
  create: (_link, settings) =>
    new TargetTimeDecoder(new QsDecoder(qsOptionsFrom(settings), dictionaryFileOf(settings)), clockRuleOf(settings)),
  restore: (_link, settings, snapshot) =>
    TargetTimeDecoder.restore(snapshot, clockRuleOf(settings), (codec) =>
      QsDecoder.restore(codec, qsOptionsFrom(settings), dictionaryFileOf(settings)),
    ),
  // A target that reconnects keeps its names, as it does in qspy, until a reset or another build.
  // Its clock starts afresh: a new session is a new stretch of the target's time.
  continueFrom: (_link, settings, previous) =>
    new TargetTimeDecoder(
      QsDecoder.continueFrom(
        TargetTimeDecoder.codecSnapshot(previous),
        qsOptionsFrom(settings),
        dictionaryFileOf(settings),
      ),
      clockRuleOf(settings),
    ),
};
