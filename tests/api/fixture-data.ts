import type { ApiSettings } from '@tracehub/api';
import { parseApiTokens } from '@tracehub/api';
import { DEFAULT_PALMTRACE_SETTINGS, type PalmTraceBridgeSettings } from '@tracehub/palmtrace-bridge';

export const READ_TOKEN = 'read-token-0123456789';
export const CONTROL_TOKEN = 'control-token-0123456789';
export const API_TOKENS = `${READ_TOKEN}:read,${CONTROL_TOKEN}:read+control`;

/** The api's settings for tests: the tokens above and small limits, with what a test changes. */
export function testApiSettings(overrides: Partial<ApiSettings> = {}): ApiSettings {
  return {
    tokens: parseApiTokens(API_TOKENS),
    corsOrigins: [],
    maxPageSize: 1000,
    bodyLimit: 4096,
    liveQueueRecords: 1000,
    controlTimeoutMs: 300,
    statementTimeoutMs: 20_000,
    heavyQueries: 4,
    scanLimitBytes: 2_000_000_000,
    ...overrides,
  };
}

/** The PalmTrace bridge's settings for tests: its defaults, listening on a port of the system's choosing. */
export function testPalmTraceSettings(overrides: Partial<PalmTraceBridgeSettings> = {}): PalmTraceBridgeSettings {
  return { ...DEFAULT_PALMTRACE_SETTINGS, listenPort: 0, ...overrides };
}
