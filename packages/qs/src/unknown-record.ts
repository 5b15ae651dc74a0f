import type { DecodedRecord } from '@tracehub/contracts';
import { NO_TS, type RecordContext } from './record-context.js';

/**
 * A record QSPY has no decoder for (43, 44 and 81..99 in QS 7.x): its length, and its payload
 * in the fields.
 */
export function parseUnknown(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const r = d.r;
  const len = r.remaining;
  return {
    kind: 'record',
    type: id,
    name: d.names[id],
    targetTs: null,
    fields: { length: len, payload: r.buf.slice(r.pos, r.pos + len) },
    text: `${NO_TS}Unknown Rec=${id},Len=${len}`,
    raw,
  };
}
