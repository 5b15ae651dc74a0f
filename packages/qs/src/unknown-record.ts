import { NO_TS, type RecordParser } from './record-context.js';

/**
 * A record QSPY has no decoder for (43, 44 and 81..99 in QS 7.x): its length, and its payload
 * in the fields.
 */
export const parseUnknown: RecordParser = (d, r, _c, id, raw) => {
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
};
