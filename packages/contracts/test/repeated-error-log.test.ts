import { describe, expect, it } from 'vitest';
import { RepeatedErrorLog } from '../src/repeated-error-log.js';

describe('a repeated failure', () => {
  it('is logged when it starts or changes, counted every minute while it lasts, and once when it ends', () => {
    const lines: string[] = [];
    const log = {
      info: (_: object, m: string) => lines.push(`info ${m}`),
      warn: (_: object, m: string) => lines.push(`warn ${m}`),
      error: (_: object, m: string) => lines.push(`error ${m}`),
    };
    let now = 0;
    const repeated = new RepeatedErrorLog(log, 'write', 60_000, () => now);
    repeated.succeeded();
    for (let s = 0; s < 130; s++) {
      now = s * 1000;
      repeated.failed(new Error('connection refused'));
    }
    now = 130_000;
    repeated.failed(new Error('too many clients'));
    now = 131_000;
    repeated.succeeded();
    expect(lines).toEqual([
      'error write: connection refused',
      'warn write still failing (60 more times in 60 s): connection refused',
      'warn write still failing (120 more times in 120 s): connection refused',
      'error write: too many clients',
      'info write works again after 1 s (1 failure)',
    ]);
  });
});
