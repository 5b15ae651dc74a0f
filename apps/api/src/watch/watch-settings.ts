import { Type } from '@sinclair/typebox';
import type { RuleRunnerSettings } from './rule-runner.js';

/** The settings of the watch rules, part of the api's configuration. */
export const watchConfigProperties = {
  WATCH_LEASE_MS: Type.Integer({
    minimum: 500,
    maximum: 600_000,
    default: 15_000,
    description:
      'milliseconds an api process holds a watch rule without renewing it (another takes it over after), 500 to 600000',
  }),
  WATCH_TICK_MS: Type.Integer({
    minimum: 50,
    maximum: 10_000,
    default: 250,
    description: 'milliseconds between judgements of silences, disconnections and windows, 50 to 10000',
  }),
  WATCH_DASHBOARD_URL: Type.String({
    default: '',
    pattern: '^(|https?://\\S+)$',
    description: "the dashboard's address for the links in alert notices, http(s)://... (empty: a path only)",
  }),
};

export function watchSettingsFrom(config: {
  WATCH_LEASE_MS: number;
  WATCH_TICK_MS: number;
  WATCH_DASHBOARD_URL: string;
}): RuleRunnerSettings {
  return { leaseMs: config.WATCH_LEASE_MS, tickMs: config.WATCH_TICK_MS, dashboardUrl: config.WATCH_DASHBOARD_URL };
}
