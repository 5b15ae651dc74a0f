import { cutPacketList } from '@tracehub/stp';
import { describe, expect, it } from 'vitest';
import { decodeVector, loadVectors, withoutAtNibble } from './vectors.js';

const vectors = loadVectors();

describe('STP reference vectors', () => {
  it('finds the vectors', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(27);
  });

  for (const v of vectors) {
    describe(v.name, () => {
      it('parses the packet list', () => {
        const run = decodeVector(v, 'ost');
        expect(cutPacketList(run.packets)).toEqual(v.expected.packets);
      });

      it('produces the OST events', () => {
        const run = decodeVector(v, 'ost', 4096, { packets: false });
        expect(withoutAtNibble(run.events)).toEqual(withoutAtNibble(v.expected.ost));
      });

      it('produces the PhoNet events', () => {
        const run = decodeVector(v, 'phonet', 4096, { packets: false });
        expect(withoutAtNibble(run.events)).toEqual(withoutAtNibble(v.expected.phonet));
      });

      it('leaves the same buffers open at the end', () => {
        const run = decodeVector(v, 'ost', 4096, { packets: false });
        const open = run.records
          .filter((r) => r.name === 'STP_MESSAGE_OPEN_AT_END')
          .map((r) => ({ master: r.stp?.master, channel: r.stp?.channel, len: r.fields.length }));
        expect(open).toEqual(v.expected.open_at_end);
      });
    });
  }
});
