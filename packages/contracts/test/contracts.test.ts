import { describe, expect, it } from 'vitest';
import { busNames, type DecodedRecord, isTraceRecord, toTraceRecord, validateTraceRecord } from '../src/index.js';

describe('busNames', () => {
  it('builds and parses the subjects of the bus contract', () => {
    const names = busNames();
    expect(names.rawStream).toBe('TRACE_RAW');
    expect(names.recStream).toBe('TRACE_REC');
    expect(names.decoderStateBucket).toBe('th_decoder_state');
    expect(names.leaseBucket).toBe('th_leases');
    expect(names.storageConsumer).toBe('th_storage');
    expect(names.decoderConsumer({ protocol: 'qs', rig: 'rig17', link: 'uart0' })).toBe('dec_qs_rig17_uart0');
    expect(names.rawSubject('qs', 'rig17', 'uart0')).toBe('raw.qs.rig17.uart0');
    expect(names.recSubject('stp', 'rig17', 'stm')).toBe('rec.stp.rig17.stm');
    expect(names.ctlSubject('rig17', 'uart0')).toBe('ctl.rig17.uart0');
    expect(names.recFilter()).toBe('rec.>');
    expect(names.recFilter({ rig: 'rig17' })).toBe('rec.*.rig17.*');
    expect(names.parseSubject('rec.qs.rig17.uart0')).toEqual({
      kind: 'rec',
      protocol: 'qs',
      rig: 'rig17',
      link: 'uart0',
    });
    expect(names.parseSubject('rec.xx.rig17.uart0')).toBeUndefined();
  });

  it('keeps prefixed installations apart', () => {
    const names = busNames('t1');
    expect(names.rawStream).toBe('t1_TRACE_RAW');
    expect(names.rawSubject('qs', 'r', 'l')).toBe('t1.raw.qs.r.l');
    expect(names.parseSubject('t1.raw.qs.r.l')).toEqual({ kind: 'raw', protocol: 'qs', rig: 'r', link: 'l' });
    expect(names.parseSubject('raw.qs.r.l')).toBeUndefined();
  });

  it('refuses names that would break subjects', () => {
    expect(() => busNames().rawSubject('qs', 'rig.7', 'l')).toThrow(/invalid rig name/);
    expect(() => busNames().rawSubject('qs', 'r', '*')).toThrow(/invalid link name/);
  });
});

describe('TraceRecord', () => {
  const decoded: DecodedRecord = {
    kind: 'record',
    type: 1,
    name: 'QS_QEP_STATE_ENTRY',
    targetTs: 4294967295n,
    qs: { obj: 'l_blinky' },
    fields: { obj: 'l_blinky', state: 'Blinky_on', big: 1n << 60n },
    text: '0000000001 ===RTC===> St-Entry Obj=l_blinky,State=Blinky_on',
    raw: new Uint8Array([1, 2, 3]),
  };

  it('places a decoded record and validates against the schema', () => {
    const rec = toTraceRecord(decoded, {
      rig: 'rig1',
      link: 'uart0',
      session: 's1',
      seq: 0,
      chunk: 3,
      protocol: 'qs',
      hostNs: 1_700_000_000_000_000_000n,
    });
    expect(rec.hostNs).toBe('1700000000000000000');
    expect(rec.targetTs).toBe('4294967295');
    expect(rec.raw).toBe('AQID');
    expect(rec.fields.big).toBe('1152921504606846976');
    expect(validateTraceRecord(rec)).toEqual([]);
    expect(isTraceRecord(JSON.parse(JSON.stringify(rec)))).toBe(true);
  });

  it('names what is wrong with an invalid record', () => {
    const problems = validateTraceRecord({ rig: 'a.b', kind: 'nope' });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((p) => p.path === '/rig')).toBe(true);
  });
});
