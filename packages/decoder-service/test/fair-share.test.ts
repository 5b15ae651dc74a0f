import { describe, expect, it } from 'vitest';
import { fairShare } from '../src/fair-share.js';

describe('fairShare', () => {
  it('gives every link to exactly one share, none two apart', () => {
    for (let workers = 1; workers <= 9; workers++) {
      for (let links = 0; links <= 40; links++) {
        const shares = Array.from({ length: workers }, (_, rank) => fairShare(links, workers, rank));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(links);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('gives the larger shares to the first ranks', () => {
    expect([0, 1, 2].map((rank) => fairShare(64, 3, rank))).toEqual([22, 21, 21]);
    expect([0, 1, 2].map((rank) => fairShare(2, 3, rank))).toEqual([1, 1, 0]);
  });

  it('takes every link while it knows of no worker (its own membership not yet seen)', () => {
    expect(fairShare(5, 0, 0)).toBe(5);
  });
});
