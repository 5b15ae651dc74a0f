import { FormatRegistry, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type ReporterEndpointInput,
  ReporterEndpointSchema,
  type ReporterOptions,
  ReporterOptionsSchema,
  replayProblem,
} from './endpoint-schema.js';

/** The bridge's environment settings, spread into the api's config schema. */
export const palmTraceConfigProperties = {
  PALMTRACE_REPORTERS: Type.String({
    default: '[]',
    description:
      'JSON list of Reporter endpoints to connect to at start: [{"host":"lab-pc","port":6000,"filter":{"links":["uart0"]}}]',
  }),
  PALMTRACE_LISTEN_PORT: Type.String({
    default: '',
    pattern: '^(|[0-9]{1,5})$',
    description: 'TCP port on which PalmTrace clients may connect for the live stream (empty: off)',
  }),
  PALMTRACE_LISTEN_HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'address of that port' }),
  PALMTRACE_LISTEN_OPTIONS: Type.String({
    default: '{}',
    description: 'JSON options of the listening port: filter, modules, encoding, binaryStp, rigNumbers',
  }),
  PALMTRACE_QUEUE: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10_000,
    description: 'records queued per Reporter before the oldest are dropped',
  }),
  PALMTRACE_LEASE_MS: Type.Integer({
    minimum: 500,
    maximum: 600_000,
    default: 5000,
    description:
      'how long an API process holds a Reporter endpoint without renewing it: the longest an endpoint stays unserved when its process dies',
  }),
};

export interface PalmTraceConfig {
  PALMTRACE_REPORTERS: string;
  PALMTRACE_LISTEN_PORT: string;
  PALMTRACE_LISTEN_HOST: string;
  PALMTRACE_LISTEN_OPTIONS: string;
  PALMTRACE_QUEUE: number;
  PALMTRACE_LEASE_MS: number;
}

export interface PalmTraceBridgeSettings {
  /** Endpoints loaded at start (source `config`). */
  reporters: ReporterEndpointInput[];
  /** Port of the listening mode; undefined: off (0: any free port). */
  listenPort?: number;
  listenHost: string;
  listenOptions: ReporterOptions;
  /** Records queued per connection before the oldest are dropped. */
  queueRecords: number;
  /** Bytes queued per connection before the oldest are dropped. */
  queueBytes: number;
  /** Wait between connection attempts, ms. */
  retryMs: number;
  /** How long a process holds an endpoint without renewing its lease, ms (renewed five times a lease). */
  leaseMs: number;
  /** How often the links' PalmTrace settings (`palmProcessId`, `palmModule`) are read again, ms. */
  linkSettingsRefreshMs?: number;
}

export const DEFAULT_PALMTRACE_SETTINGS: PalmTraceBridgeSettings = Object.freeze({
  reporters: [],
  listenHost: '127.0.0.1',
  listenOptions: {},
  queueRecords: 10_000,
  queueBytes: 8 * 1024 * 1024,
  retryMs: 1000,
  leaseMs: 5000,
});

// Value.Errors knows no formats by itself; the replay range uses RFC 3339 instants.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v)));
}

function parseJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${name} is not valid JSON: ${(error as Error).message}`);
  }
}

function firstError(name: string, schema: Parameters<typeof Value.Errors>[0], value: unknown): string | undefined {
  for (const e of Value.Errors(schema, value)) return `${name}${e.path.replaceAll('/', '.')}: ${e.message}`;
  return undefined;
}

/** Reads and checks the bridge's settings; throws one clear message for a bad value. */
export function palmTraceSettingsFrom(config: PalmTraceConfig): PalmTraceBridgeSettings {
  const reporters = parseJson('PALMTRACE_REPORTERS', config.PALMTRACE_REPORTERS);
  if (!Array.isArray(reporters)) throw new Error('PALMTRACE_REPORTERS must be a JSON list of endpoints');
  reporters.forEach((entry, i) => {
    const problem = firstError(`PALMTRACE_REPORTERS[${i}]`, ReporterEndpointSchema, entry);
    if (problem) throw new Error(problem);
    const replay = replayProblem((entry as ReporterEndpointInput).replay);
    if (replay) throw new Error(`PALMTRACE_REPORTERS[${i}]: ${replay}`);
  });
  const listenOptions = parseJson('PALMTRACE_LISTEN_OPTIONS', config.PALMTRACE_LISTEN_OPTIONS);
  const problem = firstError('PALMTRACE_LISTEN_OPTIONS', ReporterOptionsSchema, listenOptions);
  if (problem) throw new Error(problem);
  const port = config.PALMTRACE_LISTEN_PORT === '' ? undefined : Number(config.PALMTRACE_LISTEN_PORT);
  if (port !== undefined && port > 65535) throw new Error('PALMTRACE_LISTEN_PORT must be a TCP port up to 65535');
  return {
    ...DEFAULT_PALMTRACE_SETTINGS,
    reporters: reporters as ReporterEndpointInput[],
    listenPort: port,
    listenHost: config.PALMTRACE_LISTEN_HOST,
    listenOptions: listenOptions as ReporterOptions,
    queueRecords: config.PALMTRACE_QUEUE,
    leaseMs: config.PALMTRACE_LEASE_MS,
  };
}
