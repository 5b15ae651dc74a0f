import type { TraceRecord } from '@tracehub/contracts';
import { natsUrl, uniquePrefix } from '@tracehub/tests/support';
import { type Bus, connectBus, ensureTopology, removeTopology, type TopologyLimits } from '../src/index.js';

/**
 * A bus on a prefix of its own named after `label`, with its streams and buckets (at `limits`)
 * when `limits` is given; `closeTestBus` removes them.
 */
export async function connectTestBus(label: string, limits?: Partial<TopologyLimits>): Promise<Bus> {
  const bus = await connectBus({ url: natsUrl(), name: `${label}-test`, prefix: uniquePrefix(label) });
  if (limits) await ensureTopology(bus, limits);
  return bus;
}

/** Removes the bus's streams and buckets (those a test made), then disconnects. */
export async function closeTestBus(bus: Bus): Promise<void> {
  await removeTopology(bus);
  await bus.close();
}

/** A record of `place` with only a `seq` and a `text`: type 1 named X, received at host time 1 ns. */
export function plainRecord(
  place: Pick<TraceRecord, 'protocol' | 'rig' | 'link' | 'session' | 'chunk'>,
  seq: number,
  text: string,
): TraceRecord {
  return {
    ...place,
    seq,
    hostNs: '1',
    targetTs: null,
    kind: 'record',
    type: 1,
    name: 'X',
    fields: {},
    text,
    raw: '',
  };
}
