import { fileURLToPath } from 'node:url';
import {
  type PalmTraceBridgeSettings,
  palmTraceConfigProperties,
  palmTraceSettingsFrom,
} from '@tracehub/palmtrace-bridge';
import {
  busPrefixSetting,
  type ConfigProblem,
  databaseUrlSetting,
  fileSetting,
  natsConnectionSettings,
  portInUseProblem,
  type Static,
  secretSetting,
  Type,
} from '@tracehub/service-kit';
import type { RuleRunnerSettings } from './watch/rule-runner.js';
import { watchConfigProperties, watchSettingsFrom } from './watch/watch-settings.js';

const API_TOKENS_EXPECTED =
  "comma-separated TOKEN:SCOPES, scopes 'read', 'control' or 'read+control', each token at least 16 characters, e.g. API_TOKENS=$(openssl rand -hex 16):read+control";

export const ApiConfigSchema = Type.Object({
  ...natsConnectionSettings,
  DATABASE_URL: databaseUrlSetting,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
  API_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'a TCP port from 0 to 65535' }),
  API_HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'an address to listen on' }),
  API_TOKENS: secretSetting(
    Type.String({
      default: '',
      pattern:
        '^(|[^:,\\s]{16,}:(read|control|read\\+control|control\\+read)(,[^:,\\s]{16,}:(read|control|read\\+control|control\\+read))*)$',
      description: API_TOKENS_EXPECTED,
    }),
  ),
  API_AUTH: Type.Union([Type.Literal('tokens'), Type.Literal('none')], {
    default: 'tokens',
    description:
      "'tokens' (every request but health needs a token of API_TOKENS) or 'none' (no authentication: anyone who reaches the port may read and control, and the dashboard says so)",
  }),
  API_TLS_CERT: fileSetting(
    "the path of the API's TLS certificate chain (PEM); with API_TLS_KEY the API serves HTTPS (empty: HTTP)",
  ),
  API_TLS_KEY: fileSetting("the path of the API's TLS private key (PEM)"),
  API_CORS_ORIGINS: Type.String({
    default: '',
    description: 'comma-separated origins allowed by CORS (empty: CORS off)',
  }),
  API_MAX_PAGE: Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 }),
  API_BODY_LIMIT: Type.Integer({ minimum: 1024, maximum: 10_485_760, default: 65_536 }),
  API_LIVE_QUEUE: Type.Integer({ minimum: 10, maximum: 1_000_000, default: 20_000 }),
  API_CONTROL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 3000 }),
  API_STATEMENT_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 20_000,
    description: 'milliseconds any one database statement of the api may run, 100 to 600000',
  }),
  API_HEAVY_QUERIES: Type.Integer({
    minimum: 1,
    maximum: 256,
    default: 4,
    description: 'record queries, exports, timelines and sequence diagrams served at once, 1 to 256',
  }),
  API_SCAN_LIMIT_MB: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 2000,
    description:
      'MB of records (uncompressed) one records page may read after pruning blocks by their summaries; a page that needs more is answered 422, asking for a narrower query',
  }),
  DASHBOARD_DIR: Type.String({
    default: '',
    description: 'folder of the built dashboard (empty: apps/dashboard/dist)',
  }),
  ...palmTraceConfigProperties,
  ...watchConfigProperties,
});
export type ApiConfig = Static<typeof ApiConfigSchema>;

/**
 * What the schema cannot say: tokens are required unless API_AUTH=none asks for none, TLS
 * takes a certificate and a key together, and API_PORT must be free.
 */
export async function apiConfigProblems(config: ApiConfig): Promise<ConfigProblem[]> {
  const problems: ConfigProblem[] = [];
  if (config.API_AUTH === 'tokens' && config.API_TOKENS === '') {
    problems.push({
      variable: 'API_TOKENS',
      got: undefined,
      secret: true,
      why: 'not set, and the API does not serve without authentication unless API_AUTH=none says so',
      expected: API_TOKENS_EXPECTED,
    });
  }
  if ((config.API_TLS_CERT === '') !== (config.API_TLS_KEY === '')) {
    const missing = config.API_TLS_CERT === '' ? 'API_TLS_CERT' : 'API_TLS_KEY';
    problems.push({
      variable: missing,
      got: undefined,
      why: 'not set, and API_TLS_CERT and API_TLS_KEY go together',
      expected:
        'both set to serve HTTPS, or neither for HTTP, e.g. API_TLS_CERT=/etc/tracehub/api.crt API_TLS_KEY=/etc/tracehub/api.key',
    });
  }
  const inUse = await portInUseProblem('API_PORT', config.API_PORT, config.API_HOST);
  if (inUse) problems.push(inUse);
  return problems;
}

export type Scope = 'read' | 'control';

/** What the app needs to know from configuration, read once and passed down. */
export interface ApiSettings {
  /** Token -> its scopes. */
  tokens: ReadonlyMap<string, ReadonlySet<Scope>>;
  /** API_AUTH=none: no token asked for, every request may read and control. */
  authNone?: boolean;
  /** Origins CORS allows; empty: CORS off. */
  corsOrigins: string[];
  /** Largest page a records or sessions request may ask for. */
  maxPageSize: number;
  /** Largest request body, bytes. */
  bodyLimit: number;
  /** Records queued per live client before the oldest are dropped (and counted as missed). */
  liveQueueRecords: number;
  /** How long a control request waits for the gateway. */
  controlTimeoutMs: number;
  /** How long any one database statement may run before Postgres stops it (the answer is a 503). */
  statementTimeoutMs: number;
  /** Heavy requests (record queries, exports, timelines, sequence diagrams) served at once; more get a 503. */
  heavyQueries: number;
  /** Record bytes one records page may read before it is refused as too broad. */
  scanLimitBytes: number;
  /** Serve HTTPS with this certificate chain and key (PEM files); undefined: HTTP. */
  tls?: { certFile: string; keyFile: string };
  /** Built dashboard to serve at `/`; undefined: none. */
  dashboardDir?: string;
  /** PalmTrace bridge: Reporter endpoints, listening port, queue bound; omitted: none, off. */
  palmTrace?: PalmTraceBridgeSettings;
  /** Watch rules: lease, tick, dashboard address for notices; omitted: the defaults. */
  watch?: RuleRunnerSettings;
}

export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/dist', import.meta.url));

/** `tokenA:read,tokenB:read+control` -> a map from token to scopes. */
export function parseApiTokens(text: string): Map<string, Set<Scope>> {
  const tokens = new Map<string, Set<Scope>>();
  for (const entry of text.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const colon = trimmed.lastIndexOf(':');
    if (colon <= 0) throw new Error(`API_TOKENS entry without scopes (expected TOKEN:read or TOKEN:read+control)`);
    const scopes = new Set<Scope>();
    for (const s of trimmed.slice(colon + 1).split('+')) {
      if (s !== 'read' && s !== 'control') throw new Error(`API_TOKENS has an unknown scope ${JSON.stringify(s)}`);
      scopes.add(s);
    }
    tokens.set(trimmed.slice(0, colon), scopes);
  }
  return tokens;
}

export function apiSettingsFrom(config: ApiConfig): ApiSettings {
  if ((config.API_TLS_CERT === '') !== (config.API_TLS_KEY === '')) {
    throw new Error('API_TLS_CERT and API_TLS_KEY go together: set both to serve HTTPS, or neither for HTTP');
  }
  return {
    ...(config.API_TLS_CERT ? { tls: { certFile: config.API_TLS_CERT, keyFile: config.API_TLS_KEY } } : {}),
    tokens: parseApiTokens(config.API_TOKENS),
    authNone: config.API_AUTH === 'none',
    corsOrigins: config.API_CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter((o) => o !== ''),
    maxPageSize: config.API_MAX_PAGE,
    bodyLimit: config.API_BODY_LIMIT,
    liveQueueRecords: config.API_LIVE_QUEUE,
    controlTimeoutMs: config.API_CONTROL_TIMEOUT_MS,
    statementTimeoutMs: config.API_STATEMENT_TIMEOUT_MS,
    heavyQueries: config.API_HEAVY_QUERIES,
    scanLimitBytes: config.API_SCAN_LIMIT_MB * 1_000_000,
    dashboardDir: config.DASHBOARD_DIR === '' ? DEFAULT_DASHBOARD_DIR : config.DASHBOARD_DIR,
    palmTrace: palmTraceSettingsFrom(config),
    watch: watchSettingsFrom(config),
  };
}
