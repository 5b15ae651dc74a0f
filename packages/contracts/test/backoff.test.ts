import { describe, expect, it } from 'vitest';
import { Backoff } from '../src/index.js';

describe('Backoff', () => {
  it('doubles from the first wait up to the cap', () => {
    const backoff = new Backoff({ fromMs: 200, maxMs: 5000 });
    const waits = Array.from({ length: 8 }, () => backoff.next());
    expect(waits).toEqual([200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  });

  it('starts again from the first wait after a reset', () => {
    const backoff = new Backoff({ fromMs: 250, maxMs: 5000 });
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(250);
    expect(backoff.next()).toBe(500);
  });

  it('waits the first wait once even when the cap is below it, as the loops it replaced did', () => {
    const backoff = new Backoff({ fromMs: 100, maxMs: 30 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([100, 30, 30]);
  });
});
