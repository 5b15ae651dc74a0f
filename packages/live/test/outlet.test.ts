import { describe, expect, it } from 'vitest';
import { type MissedReason, Outlet, type OutletSink } from '../src/outlet.js';

/** A sink that takes `room` entries, then is backed up until `drain()`. */
function sink(room = Number.POSITIVE_INFINITY) {
  const got: Array<{ item?: number; missed?: number; reason?: MissedReason }> = [];
  let left = room;
  let resume: (() => void) | undefined;
  const s: OutletSink<number> = {
    write(item) {
      got.push({ item });
      return --left > 0;
    },
    missed(missed, reason) {
      got.push({ missed, reason });
      return --left > 0;
    },
    whenWritable(r) {
      resume = r;
    },
  };
  return {
    s,
    got,
    drain(more = Number.POSITIVE_INFINITY) {
      left = more;
      resume?.();
    },
  };
}
const turn = () => new Promise((r) => setImmediate(r));
const settle = async () => {
  for (let i = 0; i < 5; i++) await turn();
};

describe('Outlet', () => {
  it('drops the oldest past its bounds and never holds more', () => {
    const outlet = new Outlet<number>({ records: 3, bytes: 1000 });
    const reader = outlet.reader();
    for (let i = 0; i < 10; i++) outlet.push(i, 1, 100);
    expect([reader.queued, reader.missed, outlet.heldRecordCount]).toEqual([3, 7, 3]);
    const bytesBound = new Outlet<number>({ records: 100, bytes: 250 });
    const other = bytesBound.reader();
    for (let i = 0; i < 10; i++) bytesBound.push(i, 1, 100);
    expect([other.queued, other.missed]).toEqual([2, 8]);
  });

  it('gives a reader that keeps up everything, and a reader that stalls its newest entries and the exact count it missed', async () => {
    const outlet = new Outlet<number>({ records: 20 });
    const fast = sink();
    const slow = sink(1);
    outlet.reader(fast.s);
    const slowReader = outlet.reader(slow.s);
    for (let i = 0; i < 100; i++) {
      // Entries of 2 records each.
      outlet.push(i, 2);
      if (i % 3 === 0) await turn();
    }
    await settle();
    expect(fast.got.map((g) => g.item)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(slowReader.missed + slowReader.queued + slowReader.delivered).toBe(200);
    slow.drain();
    await settle();
    const items = slow.got.filter((g) => g.item !== undefined).map((g) => g.item as number);
    const missed = slow.got.reduce((n, g) => n + (g.missed ?? 0), 0);
    expect(items.length * 2 + missed).toBe(200);
    expect(items.slice(-5)).toEqual([95, 96, 97, 98, 99]);
    expect(slow.got.filter((g) => g.missed !== undefined).every((g) => g.reason === 'slow')).toBe(true);
  });

  it('says records dropped while a reader had no transport were missed while it was away', async () => {
    const outlet = new Outlet<number>({ records: 5 });
    const reader = outlet.reader();
    for (let i = 0; i < 8; i++) outlet.push(i, 1);
    const back = sink();
    reader.attach(back.s);
    await settle();
    expect(back.got).toEqual([{ missed: 3, reason: 'away' }, ...[3, 4, 5, 6, 7].map((item) => ({ item }))]);
  });

  it('lets a producer wait for room instead of dropping', async () => {
    const outlet = new Outlet<number>({ records: 2 });
    const out = sink(1);
    outlet.reader(out.s);
    outlet.push(0, 1);
    outlet.push(1, 1);
    let waited = false;
    const room = outlet.whenRoom().then(() => {
      waited = true;
    });
    await settle();
    out.drain();
    await room;
    expect(waited).toBe(true);
  });
});
