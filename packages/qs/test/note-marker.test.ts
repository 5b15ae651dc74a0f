import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';

describe('a marker set on a live QS link', () => {
  it('becomes a TRACEHUB_NOTE record (kind marker) with its comment; a time base means nothing to QS', () => {
    const decoder = new QsDecoder();
    const records: DecodedRecord[] = [];
    const emit = (r: DecodedRecord) => records.push(r);
    decoder.mark({ kind: 'user', comment: 'door "A" open' }, { hostNs: 1n }, emit);
    decoder.mark({ kind: 'user' }, { hostNs: 2n }, emit);
    decoder.mark({ kind: 'timeBase', offsetNs: '5' }, { hostNs: 3n }, emit);
    expect(records.map((r) => [r.kind, r.type, r.name, r.text, r.fields.comment, r.raw.length])).toEqual([
      ['marker', -10, 'TRACEHUB_NOTE', 'tracehub note "door \\"A\\" open"', 'door "A" open', 0],
      ['marker', -10, 'TRACEHUB_NOTE', 'tracehub note', '', 0],
    ]);
  });
});
