import type { DecoderFactory, LinkSettings } from '@tracehub/bus';
import { QsDecoder, type QsDecoderOptions } from '@tracehub/qs';

const SIZE_SETTINGS = [
  'version',
  'objPtrSize',
  'funPtrSize',
  'timeSize',
  'sigSize',
  'eventSize',
  'queueCtrSize',
  'poolCtrSize',
  'poolBlkSize',
  'teCtrSize',
] as const;

/**
 * QS options of a link from its settings (`links.settings`): the sizes used until the target
 * announces its own (qspy's -O, -F, -T, ... options). Unknown or non-numeric keys are ignored.
 */
export function qsOptionsFrom(settings: LinkSettings): QsDecoderOptions {
  const options: QsDecoderOptions = {};
  for (const key of SIZE_SETTINGS) {
    const value = settings[key];
    if (typeof value === 'number' && Number.isInteger(value)) options[key] = value;
  }
  return options;
}

export const qsDecoderFactory: DecoderFactory = {
  create: (_link, settings) => new QsDecoder(qsOptionsFrom(settings)),
  restore: (_link, settings, snapshot) => QsDecoder.restore(snapshot, qsOptionsFrom(settings)),
};
