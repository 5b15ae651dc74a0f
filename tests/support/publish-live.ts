// Kept apart from the harness's index: the packages' tests import that, and not all of them
// have the bus.
import type { Bus } from '@tracehub/bus';
import type { TraceRecord } from '@tracehub/contracts';
import { recordBatchOf } from './record-batch.js';

/**
 * Publishes `recordBatchOf(records, chunk)` on core NATS, on the link's record subject: what the
 * api's live readers see of a decoder's JetStream publish, without the stream. Not flushed.
 */
export function publishLive(bus: Bus, records: TraceRecord[], chunk: number): void {
  const batch = recordBatchOf(records, chunk);
  bus.nc.publish(bus.names.recSubject(batch.protocol, batch.rig, batch.link), JSON.stringify(batch));
}
