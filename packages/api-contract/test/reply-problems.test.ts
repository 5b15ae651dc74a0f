import { describe, expect, it } from 'vitest';
import { RecordsPage, replyProblems, Session } from '../src/index.js';

const session = {
  id: 's1',
  rig: 'rig1',
  link: 'uart0',
  protocol: 'qs',
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: null,
  firstRecordAt: '2026-01-01T00:00:00.001Z',
  lastRecordAt: '2026-01-01T00:00:01.000Z',
  records: 10,
  errors: 0,
  gaps: 0,
  lostBytes: 0,
  recordTotal: 10,
  complete: true,
  recordsRefused: 0,
  targetInfo: null,
};

describe('replyProblems', () => {
  it('admits a reply that fits its schema', () => {
    expect(replyProblems(Session, session)).toEqual([]);
  });

  it('names a field a reply lacks, of the wrong type, or of the wrong format', () => {
    const { recordTotal: _, ...withoutTotal } = session;
    expect(replyProblems(Session, withoutTotal)).toContain('/recordTotal: Expected union value');
    expect(replyProblems(Session, { ...session, records: '10' })).toContain('/records: Expected integer');
    expect(replyProblems(Session, { ...session, startedAt: 'yesterday' })).toContain(
      "/startedAt: Expected string to match 'date-time' format",
    );
  });

  it('checks records against the shared TraceRecord schema it refers to', () => {
    expect(replyProblems(RecordsPage, { records: [], next: null, prev: null })).toEqual([]);
    expect(replyProblems(RecordsPage, { records: [{ seq: 1 }], next: null, prev: null })).not.toEqual([]);
  });
});
