import { describe, expect, it } from 'vitest';
import {
  alignmentKeyParts,
  digestLength,
  digestRecords,
  forEachDigestKey,
  mergeDigests,
  mergeSummaries,
  stateOf,
  summarizeRecords,
  type TraceRecord,
} from '../src/index.js';

let seq = 0;
/** A QS record of session s1 (the fields a digest reads, and those every record has). */
function rec(name: string, over: Partial<TraceRecord> = {}): TraceRecord {
  return {
    session: 's1',
    seq: seq++,
    rig: 'r',
    link: 'l',
    protocol: 'qs',
    chunk: 0,
    hostNs: String(1_000 + seq),
    targetTs: null,
    kind: 'record',
    type: 1,
    name,
    fields: {},
    text: '',
    raw: '',
    ...over,
  };
}

/** The keys of a digest's order, as text. */
const keysOf = (d: ReturnType<typeof digestRecords>) => {
  const keys: string[] = [];
  forEachDigestKey(d, (i) => keys.push(d.keys[i]));
  return keys;
};

describe('records digest', () => {
  it('keys trace records by name, object, signal, source and state entered, with target addresses made one', () => {
    const d = digestRecords(
      [
        rec('QS_QEP_TRAN', { qs: { obj: 'l_philo[0]', sig: 'EAT_SIG' }, fields: { target: 'Philo_eating' } }),
        rec('QS_QEP_DISPATCH', { qs: { obj: '0x20001000', sig: 'TIMEOUT_SIG' } }),
        rec('QS_QEP_DISPATCH', { qs: { obj: '0x20002000', sig: 'TIMEOUT_SIG' } }),
        rec('QS_TARGET_INFO', { kind: 'info' }),
        rec('ITM', { protocol: 'stp', stp: { master: 2, channel: 7 } }),
      ],
      stateOf,
    );
    expect(d.keys.map(alignmentKeyParts)).toEqual([
      ['QS_QEP_TRAN', 'l_philo[0]', 'EAT_SIG', 'l_philo[0]', 'Philo_eating'],
      ['QS_QEP_DISPATCH', '(address)', 'TIMEOUT_SIG', '(address)', ''],
      ['ITM', '', '', 'M2/C7', ''],
    ]);
    // Four trace records in order (the target info is counted, not aligned).
    expect(digestLength(d)).toBe(4);
    expect(keysOf(d)).toEqual([d.keys[0], d.keys[1], d.keys[1], d.keys[2]]);
    expect(d.counts).toEqual([
      ['l_philo[0]', 'QS_QEP_TRAN', 1],
      ['(address)', 'QS_QEP_DISPATCH', 2],
      ['', 'QS_TARGET_INFO', 1],
      ['M2/C7', 'ITM', 1],
    ]);
    expect(d.order).toMatch(/^[0-9A-Za-z_-]*$/);
  });

  it('of two runs merged is the digest of both, also past 64 and 4096 keys (more digits a record)', () => {
    for (const distinct of [10, 100, 5000]) {
      const records = Array.from({ length: distinct * 2 }, (_, i) =>
        rec(`N${i % distinct}`, { qs: { obj: `o${i % 3}` } }),
      );
      const half = distinct + 7;
      const whole = digestRecords(records, stateOf);
      const merged = mergeDigests(
        digestRecords(records.slice(0, half), stateOf),
        digestRecords(records.slice(half), stateOf),
      );
      expect(merged).toEqual(whole);
      expect(keysOf(whole).map(alignmentKeyParts)).toEqual(records.map((r) => [r.name, r.qs?.obj, '', r.qs?.obj, '']));
    }
  });

  it('is kept in a summary, merged with it, and dropped when either run has none (an older publisher)', () => {
    const a = [rec('A', { qs: { obj: 'o' } })];
    const b = [rec('B', { qs: { obj: 'o' } })];
    const sa = summarizeRecords(a);
    const sb = summarizeRecords(b);
    expect(mergeSummaries(sa, sb).digest).toEqual(digestRecords([...a, ...b], stateOf));
    expect(mergeSummaries(sa, { ...sb, digest: undefined }).digest).toBeNull();
  });

  it('refuses an order that is cut, or names a key it does not have', () => {
    const d = digestRecords([rec('A'), rec('B')], stateOf);
    expect(() => forEachDigestKey({ ...d, order: `${d.order}!` }, () => {})).toThrow(/outside its digits/);
    expect(() => forEachDigestKey({ ...d, order: `${d.order}9` }, () => {})).toThrow(/does not have/);
    expect(() => forEachDigestKey({ ...d, keys: new Array(65).fill('k'), order: 'A' }, () => {})).toThrow(/cut/);
  });
});
