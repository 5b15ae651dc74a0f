import { describe, expect, it } from 'vitest';
import { postgresFailureOf, retryPostgres } from '../src/index.js';

const failure = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('postgresFailureOf', () => {
  it('tells the data, a statement timeout and Postgres away apart', () => {
    expect(postgresFailureOf(failure('22P02'))).toBe('data');
    expect(postgresFailureOf(failure('23502'))).toBe('data');
    expect(postgresFailureOf(failure('57014'))).toBe('statement-timeout');
    expect(postgresFailureOf(failure('ECONNREFUSED'))).toBe('unavailable');
    expect(postgresFailureOf(failure('08006'))).toBe('unavailable');
    expect(postgresFailureOf(failure('57P01'))).toBe('unavailable');
    expect(postgresFailureOf(new Error('Connection terminated unexpectedly'))).toBe('unavailable');
    expect(postgresFailureOf(failure('40P01'))).toBe('other');
    expect(postgresFailureOf(undefined)).toBe('other');
  });
});

describe('retryPostgres', () => {
  it('tries again while Postgres is away, waiting longer each time', async () => {
    const waits: number[] = [];
    const failures: number[] = [];
    let tries = 0;
    const result = await retryPostgres(
      async () => {
        if (++tries < 4) throw failure('ECONNREFUSED');
        return 'written';
      },
      { wait: async (ms) => void waits.push(ms), onFailure: (_, attempt) => failures.push(attempt) },
    );
    expect(result).toEqual({ ok: true, value: 'written', attempts: 4 });
    expect(waits).toEqual([200, 400, 800]);
    expect(failures).toEqual([1, 2, 3]);
  });

  it('gives back a write Postgres refused as data, without trying it again', async () => {
    const refusal = failure('22P02', 'records are not JSON');
    let tries = 0;
    const result = await retryPostgres(async () => {
      tries++;
      throw refusal;
    });
    expect(result).toEqual({ ok: false, refused: refusal, attempts: 1 });
    expect(tries).toBe(1);
  });
});
