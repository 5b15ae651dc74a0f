import { describe, expect, it } from 'vitest';
import type { TraceRecord } from '../src/record.js';
import { admitsLink, matchesRecord, recordMatcher } from '../src/record-match.js';

const record = (over: Partial<TraceRecord> = {}): TraceRecord => ({
  rig: 'rig1',
  link: 'uart0',
  session: 's1',
  seq: 0,
  chunk: 0,
  protocol: 'qs',
  hostNs: '1764000000000001000',
  targetTs: null,
  kind: 'record',
  type: 6,
  name: 'QS_QEP_TRAN',
  qs: { obj: 'Philo_inst[0]', sig: 'EAT_SIG', prio: 2 },
  fields: {},
  text: 'École says "Hi" to C:\\path',
  raw: '',
  ...over,
});

describe('the record match', () => {
  it('takes lists as any-of and parts together, and text literally, case aside (Unicode)', () => {
    const m = recordMatcher({ rigs: ['rig1', 'rig2'], names: ['QS_QEP_TRAN'], qsPrio: 2, text: 'éCOLE SAYS "hi"' });
    expect(m(record())).toBe(true);
    expect(m(record({ rig: 'rig3' }))).toBe(false);
    expect(m(record({ qs: { prio: 3 } }))).toBe(false);
    // Characters a pattern would read specially are taken as they are.
    expect(recordMatcher({ text: 'c:\\PATH' })(record())).toBe(true);
    expect(recordMatcher({ text: '.*' })(record())).toBe(false);
    expect(recordMatcher({ stpMaster: 1 })(record())).toBe(false);
    expect(recordMatcher({ stpMaster: 1, stpChannel: 2 })(record({ stp: { master: 1, channel: 2 } }))).toBe(true);
  });

  it('takes a host-time range, from inclusive and to exclusive, in ns', () => {
    const at = (hostNs: string) => record({ hostNs });
    const m = recordMatcher({ fromNs: '1764000000000001000', toNs: '1764000000000002000' });
    expect(
      [at('1764000000000000999'), at('1764000000000001000'), at('1764000000000001999'), at('1764000000000002000')].map(
        m,
      ),
    ).toEqual([false, true, true, false]);
  });

  it('admits a link only when its rig, link and protocol can match, and matches without a filter', () => {
    expect(admitsLink({ links: ['uart1'] }, { protocol: 'qs', rig: 'rig1', link: 'uart0' })).toBe(false);
    expect(admitsLink(undefined, { protocol: 'qs', rig: 'rig1', link: 'uart0' })).toBe(true);
    expect(matchesRecord(undefined, record())).toBe(true);
    const match = { kinds: ['error' as const] };
    expect(matchesRecord(match, record())).toBe(false);
    expect(matchesRecord(match, record({ kind: 'error' }))).toBe(true);
  });
});
