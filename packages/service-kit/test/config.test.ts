import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, natsUrlSetting, streamLimitsFrom, streamSettings } from '../src/index.js';

const schema = Type.Object({
  NATS_URL: natsUrlSetting,
  BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
  DRY_RUN: Type.Boolean({ default: false }),
  MODE: Type.Union([Type.Literal('live'), Type.Literal('replay')]),
});

function problemOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('converts values and fills in defaults', () => {
    expect(loadConfig(schema, { MODE: 'replay', BATCH_SIZE: '20', DRY_RUN: 'true', UNRELATED: 'x' })).toEqual({
      NATS_URL: 'nats://127.0.0.1:4222',
      BATCH_SIZE: 20,
      DRY_RUN: true,
      MODE: 'replay',
    });
  });

  it('names a missing variable and what it expects', () => {
    const error = problemOf({ MODE: '' });
    expect(error.message).toBe('invalid configuration: MODE is not set (expected one of "live", "replay")');
  });

  it('names a wrong variable, its value and what it expects, every problem in one line', () => {
    const error = problemOf({ MODE: 'live', BATCH_SIZE: 'lots', NATS_URL: 'http://x' });
    expect(error.problems.map((p) => p.variable)).toEqual(['NATS_URL', 'BATCH_SIZE']);
    expect(error.message).toBe(
      'invalid configuration: NATS_URL="http://x" is not a NATS URL such as nats://127.0.0.1:4222; ' +
        'BATCH_SIZE="lots" is not an integer from 1 to 10000',
    );
    expect(error.message).not.toContain('\n');
  });
});

describe('stream settings', () => {
  it('default to modest single-replica streams without an age limit and read a cluster setup', () => {
    const schema = Type.Object({ ...streamSettings });
    // No age limit: a message waits for its consumers however long they are away.
    expect(streamLimitsFrom(loadConfig(schema, {}))).toEqual({
      replicas: 1,
      rawMaxBytes: 1 << 30,
      rawMaxAgeMs: 0,
      recMaxBytes: 1 << 30,
      recMaxAgeMs: 0,
    });
    const cluster = loadConfig(schema, { TRACEHUB_STREAM_REPLICAS: '3', TRACEHUB_RAW_MAX_AGE_HOURS: '0.5' });
    expect(streamLimitsFrom(cluster)).toMatchObject({ replicas: 3, rawMaxAgeMs: 1_800_000 });
    expect(() => loadConfig(schema, { TRACEHUB_STREAM_REPLICAS: '7' })).toThrow(/TRACEHUB_STREAM_REPLICAS/);
    expect(() => loadConfig(schema, { TRACEHUB_REC_MAX_BYTES: '1000' })).toThrow(/TRACEHUB_REC_MAX_BYTES/);
  });
});
