import type { QsKey } from './dictionaries.js';
import type { RecordContext } from './record-context.js';

/**
 * The reads that recur across the record families: the fields whose size the configuration
 * gives (spec 4.3), a time event's tick rate and an event's pool and reference count. Small
 * enough to be inlined by both of V8's optimising tiers (PERFORMANCE.md).
 */

/**
 * An event's pool and reference count as `pool * 256 + ref`: a byte each, or before QS 4.2 in
 * most records (`packed`) one byte of both, the pool in its top two bits. One number, so that
 * reading them makes no object.
 */
export function readPoolRef(d: RecordContext, packed: boolean): number {
  const pr = d.r.u(1);
  return packed ? (pr >> 6) * 256 + (pr & 0x3f) : pr * 256 + d.r.u(1);
}

// One read each of the fields whose size the configuration gives, and a time event's tick
// rate (a byte from QS 5.0, none before).
export const readTime = (d: RecordContext): number => d.r.u(d.config.timeSize);
export const readSig = (d: RecordContext): number => d.r.u(d.config.sigSize);
export const readObj = (d: RecordContext): QsKey => d.r.ptr(d.config.objPtrSize);
export const readFun = (d: RecordContext): QsKey => d.r.ptr(d.config.funPtrSize);
export const readEventSize = (d: RecordContext): number => d.r.u(d.config.eventSize);
export const readQueueCtr = (d: RecordContext): number => d.r.u(d.config.queueCtrSize);
export const readPoolCtr = (d: RecordContext): number => d.r.u(d.config.poolCtrSize);
export const readTeCtr = (d: RecordContext): number => d.r.u(d.config.teCtrSize);
export const readRate = (d: RecordContext): number => (d.config.version < 500 ? 0 : d.r.u(1));
