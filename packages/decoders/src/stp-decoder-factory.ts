import type { DecoderFactory, LinkSettings } from '@tracehub/decoder-service';
import { StpDecoder, type StpDecoderOptions, SwdDecoder, type SwdDecoderOptions } from '@tracehub/stp';
import { STP_TARGET_CLOCK_RULE, TargetTimeDecoder } from './target-time-decoder.js';

const isByte = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xff;

/**
 * STP and SWD options of a link from its settings (`links.settings`): `version` (1|2),
 * `littleEndianMasters` (array of master numbers), `output` ('ost'|'phonet'),
 * `resyncPauseMs`, `maxPauseMs`, `start`, `tickHz` (device clock without FREQ), `timeOffsetNs`
 * (the time base), and the one-byte `port` (tracebox port) and
 * `processor` (SWD processor index, 0..255). Anything else is ignored.
 */
export function stpOptionsFrom(settings: LinkSettings): StpDecoderOptions & SwdDecoderOptions {
  const options: StpDecoderOptions & SwdDecoderOptions = {};
  if (isByte(settings.port)) options.port = settings.port;
  if (isByte(settings.processor)) options.processor = settings.processor;
  if (settings.version === 1 || settings.version === 2) options.version = settings.version;
  const masters = settings.littleEndianMasters;
  if (Array.isArray(masters) && masters.every((m) => typeof m === 'number'))
    options.littleEndianMasters = masters as number[];
  if (settings.output === 'ost' || settings.output === 'phonet') options.output = settings.output;
  if (typeof settings.resyncPauseMs === 'number') options.resyncPauseMs = settings.resyncPauseMs;
  if (typeof settings.maxPauseMs === 'number') options.maxPauseMs = settings.maxPauseMs;
  if (typeof settings.tickHz === 'number' && settings.tickHz > 0) options.tickHz = settings.tickHz;
  if (typeof settings.timeOffsetNs === 'number' && Number.isSafeInteger(settings.timeOffsetNs))
    options.timeOffsetNs = BigInt(settings.timeOffsetNs);
  if (settings.start === 'synced' || settings.start === 'hot_plug' || settings.start === 'unsynchronised') {
    options.start = settings.start;
  }
  return options;
}

/** STP links decode with StpDecoder, SWD reverse-channel links with SwdDecoder. */
export const stpDecoderFactory: DecoderFactory = {
  create: (link, settings) =>
    new TargetTimeDecoder(
      link.protocol === 'swd' ? new SwdDecoder(stpOptionsFrom(settings)) : new StpDecoder(stpOptionsFrom(settings)),
      STP_TARGET_CLOCK_RULE,
    ),
  restore: (link, settings, snapshot) =>
    TargetTimeDecoder.restore(snapshot, STP_TARGET_CLOCK_RULE, (codec) =>
      link.protocol === 'swd'
        ? SwdDecoder.restore(codec, stpOptionsFrom(settings))
        : StpDecoder.restore(codec, stpOptionsFrom(settings)),
    ),
};
