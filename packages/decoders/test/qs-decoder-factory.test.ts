import { describe, expect, it } from 'vitest';
import { qsDecoderFactory, qsOptionsFrom } from '../src/index.js';

describe('QS link settings', () => {
  it('take the sizes the codec accepts and leave out what it would refuse', () => {
    expect(qsOptionsFrom({ objPtrSize: 8, funPtrSize: 8, timeSize: 2, version: 740, colour: 'blue' })).toEqual({
      objPtrSize: 8,
      funPtrSize: 8,
      timeSize: 2,
      version: 740,
    });
    expect(qsOptionsFrom({ objPtrSize: 3, sigSize: '2', teCtrSize: 4 })).toEqual({ teCtrSize: 4 });
    const link = { protocol: 'qs' as const, rig: 'r', link: 'l' };
    expect(() => qsDecoderFactory.create(link, { objPtrSize: 3 })).not.toThrow();
  });
});
