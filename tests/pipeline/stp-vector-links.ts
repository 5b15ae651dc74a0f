// What the pipeline tests that feed STP vectors through gateway links share: the link settings
// of a vector's capture config, and a capture replayed through an in-process gateway.
import type { Bus } from '@tracehub/bus';
import { FileSource, Gateway } from '@tracehub/link';

/** Link settings of an STP vector's capture config, as the decoder reads them (`links.settings`). */
export function stpSettings(config: Record<string, unknown>): Record<string, unknown> {
  const start = String(config.start ?? '');
  return {
    version: config.protocol === 'STPv1' ? 1 : 2,
    littleEndianMasters: config.little_endian_masters ?? [],
    start: start.startsWith('synced') ? 'synced' : start.startsWith('hot_plug') ? 'hot_plug' : 'unsynchronised',
    ...(typeof config.max_pause_ms === 'number' ? { maxPauseMs: config.max_pause_ms } : {}),
    ...(typeof config.resync_pause_ms === 'number' ? { resyncPauseMs: config.resync_pause_ms } : {}),
  };
}

/**
 * A capture through a gateway file link read as fast as it goes (`tracehub replay --pace max`,
 * in this process) in `readBytes` reads; resolves with the session it made.
 */
export async function replayCapture(
  bus: Bus,
  link: { protocol: 'qs' | 'stp'; rig: string; link: string },
  file: string,
  readBytes = 16 * 1024,
): Promise<string> {
  const source = new FileSource(file, { pace: 'max', bitsPerSecond: 115_200, readBytes });
  const gateway = new Gateway({ bus, link, source, control: false });
  await gateway.start();
  await source.finished;
  await gateway.publisher.idle();
  await gateway.stop();
  return gateway.publisher.sessions[0];
}
