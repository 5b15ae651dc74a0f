import { Kind, type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { redactUrl } from '@tracehub/contracts';

export interface ConfigProblem {
  /** The environment variable. */
  variable: string;
  /** What it should hold, in words. */
  expected: string;
  /** What it held, as fit for a log line (undefined when unset or empty). */
  got: string | undefined;
  /** The setting is a secret: its value is never shown. */
  secret?: boolean;
  /**
   * What is wrong, as a sentence, when "is not <expected>" does not say it (a link listed
   * twice, a port in use); `expected` then says what would do.
   */
  why?: string;
}

/**
 * Marks a setting as a secret (tokens, passwords): a configuration error names the variable
 * and what it should hold, never its value.
 */
export function secretSetting<T extends TSchema>(schema: T): T {
  return { ...schema, secret: true };
}

/** A configuration that cannot be used; its message is one line naming every wrong variable. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(`invalid configuration: ${problems.map(describeProblem).join('; ')}`);
    this.name = 'ConfigError';
  }
}

export function describeProblem(p: ConfigProblem): string {
  if (p.why !== undefined) {
    const shown = p.got === undefined || p.secret ? p.variable : `${p.variable}=${JSON.stringify(p.got)}`;
    return `${shown}: ${p.why}; expected ${p.expected}`;
  }
  if (p.got === undefined) return `${p.variable} is not set (expected ${p.expected})`;
  if (p.secret) return `${p.variable} (a secret; its value is not shown) is not ${p.expected}`;
  return `${p.variable}=${JSON.stringify(p.got)} is not ${p.expected}`;
}

/**
 * Reads the variables named by `schema`'s properties from `env`, converts them to the
 * schema's types (numbers, booleans), fills in defaults and validates. Unset and empty
 * variables count as missing. Throws `ConfigError` naming every variable that is wrong.
 */
export function loadConfig<S extends TObject>(schema: S, env: NodeJS.ProcessEnv = process.env): Static<S> {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const value = Value.Convert(schema, Value.Default(schema, Value.Clone(raw))) as Record<string, unknown>;
  const problems = new Map<string, ConfigProblem>();
  for (const error of Value.Errors(schema, value)) {
    const variable = error.path.split('/')[1];
    if (!variable || problems.has(variable)) continue;
    const property = schema.properties[variable];
    if (!property) continue; // unknown keys are never read from env
    const secret = property.secret === true;
    // A URL's password is a secret even where the URL is not.
    const got = raw[variable] === undefined || secret ? raw[variable] : redactUrlsIn(raw[variable]);
    problems.set(variable, { variable, expected: describeExpected(property), got, secret });
  }
  if (problems.size > 0) {
    // In the schema's order, so the message reads like the list of settings.
    const order = Object.keys(schema.properties);
    throw new ConfigError([...problems.values()].sort((a, b) => order.indexOf(a.variable) - order.indexOf(b.variable)));
  }
  return value as Static<S>;
}

/** Every `scheme://user:password@host` in a setting (a list of URLs too) without its password. */
function redactUrlsIn(text: string): string {
  return /:\/\/[^/@\s]*:[^/@\s]*@/.test(text)
    ? text
        .split(',')
        .map((part) => redactUrl(part.trim()))
        .join(',')
    : text;
}

/** What a schema accepts, in words: its `description` when it has one. */
export function describeExpected(schema: TSchema): string {
  if (typeof schema.description === 'string') return schema.description;
  switch (schema[Kind]) {
    case 'Integer':
    case 'Number': {
      const what = schema[Kind] === 'Integer' ? 'an integer' : 'a number';
      const min = schema.minimum ?? schema.exclusiveMinimum;
      const max = schema.maximum ?? schema.exclusiveMaximum;
      if (min !== undefined && max !== undefined) return `${what} from ${min} to ${max}`;
      if (min !== undefined) return `${what} >= ${min}`;
      if (max !== undefined) return `${what} <= ${max}`;
      return what;
    }
    case 'Boolean':
      return 'true or false';
    case 'Literal':
      return JSON.stringify(schema.const);
    case 'Union': {
      const options = (schema.anyOf as TSchema[]).map(describeExpected);
      return `one of ${options.join(', ')}`;
    }
    case 'String':
      if (schema.pattern) return `a string matching /${schema.pattern}/`;
      return schema.minLength ? 'a non-empty string' : 'a string';
    default:
      return 'a valid value';
  }
}

/** Settings shared by services, to spread into a service's config schema. */
export const natsUrlSetting = Type.String({
  pattern: '^(nats|tls|ws|wss)://[^\\s]+$',
  default: 'nats://127.0.0.1:4222',
  description: 'a NATS URL such as nats://127.0.0.1:4222',
});

/**
 * A setting that names a file (a certificate, a key, credentials): empty for none, and when set
 * the file must exist, which `runService` checks before anything starts.
 */
export function fileSetting(description: string): ReturnType<typeof Type.String> {
  return { ...Type.String({ default: '', description }), file: true };
}

const filePath = (what: string) => fileSetting(`the path of ${what} (empty: none)`);

/** How every service reaches NATS: the URL(s), and credentials and TLS where the server asks for them. */
export const natsConnectionSettings = {
  NATS_URL: natsUrlSetting,
  NATS_CREDS: filePath("a NATS credentials file (the user's JWT and nkey seed)"),
  NATS_TLS_CA: filePath("the CA certificate (PEM) that signed the NATS server's certificate"),
  NATS_TLS_CERT: filePath("this service's client certificate (PEM), for mutual TLS"),
  NATS_TLS_KEY: filePath("this service's client key (PEM), for mutual TLS"),
};

export type NatsConnectionConfig = { [K in keyof typeof natsConnectionSettings]: string };

/** The NATS settings as `connectBus` takes them (spread into its options with a name and prefix). */
export function natsConnectionFrom(config: NatsConnectionConfig): {
  url: string;
  credsFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
} {
  const tls = {
    ...(config.NATS_TLS_CA ? { caFile: config.NATS_TLS_CA } : {}),
    ...(config.NATS_TLS_CERT ? { certFile: config.NATS_TLS_CERT } : {}),
    ...(config.NATS_TLS_KEY ? { keyFile: config.NATS_TLS_KEY } : {}),
  };
  return {
    url: config.NATS_URL,
    ...(config.NATS_CREDS ? { credsFile: config.NATS_CREDS } : {}),
    ...(Object.keys(tls).length > 0 ? { tls } : {}),
  };
}

export const databaseUrlSetting = Type.String({
  pattern: '^postgres(ql)?://[^\\s]+$',
  default: 'postgres://postgres@127.0.0.1:5432/tracehub',
  description: 'a Postgres URL such as postgres://user@host:5432/tracehub',
});

/** Prefix of every stream, subject and bucket name (empty: none), so installations and tests stay apart. */
export const busPrefixSetting = Type.String({
  pattern: '^([A-Za-z0-9_-]{1,64})?$',
  default: '',
  description: "a bus prefix of up to 64 letters, digits, '_' or '-' (or empty)",
});

/**
 * Sizes of the JetStream streams, for every service that creates them (spread into its config
 * schema). JetStream reserves each stream's max bytes on the server's disk when it is made.
 */
export const streamSettings = {
  TRACEHUB_STREAM_REPLICAS: Type.Integer({
    minimum: 1,
    maximum: 5,
    default: 1,
    description: 'stream replicas, 1 to 5 (3 on a 3-node JetStream cluster)',
  }),
  TRACEHUB_RAW_MAX_BYTES: Type.Integer({
    minimum: 1 << 20,
    default: 1 << 30,
    description:
      'bytes of raw chunks the raw stream holds for the decoders and storage at most (at least 1048576); when full it refuses and the gateways buffer, then drop',
  }),
  TRACEHUB_RAW_MAX_AGE_HOURS: Type.Number({
    minimum: 0,
    default: 0,
    description:
      'hours a raw chunk may wait for the decoders and storage before JetStream discards it unreported; 0 (default): no limit',
  }),
  TRACEHUB_REC_MAX_BYTES: Type.Integer({
    minimum: 1 << 20,
    default: 1 << 30,
    description:
      'bytes of record messages the record stream holds for storage at most (at least 1048576); when full it refuses and the decoders hold their links',
  }),
  TRACEHUB_REC_MAX_AGE_HOURS: Type.Number({
    minimum: 0,
    default: 0,
    description:
      'hours a record message may wait for storage before JetStream discards it unreported; 0 (default): no limit',
  }),
};

export type StreamConfig = { [K in keyof typeof streamSettings]: number };

/** The stream settings as the limits `ensureTopology` takes. */
export function streamLimitsFrom(config: StreamConfig) {
  return {
    replicas: config.TRACEHUB_STREAM_REPLICAS,
    rawMaxBytes: config.TRACEHUB_RAW_MAX_BYTES,
    rawMaxAgeMs: Math.round(config.TRACEHUB_RAW_MAX_AGE_HOURS * 3_600_000),
    recMaxBytes: config.TRACEHUB_REC_MAX_BYTES,
    recMaxAgeMs: Math.round(config.TRACEHUB_REC_MAX_AGE_HOURS * 3_600_000),
  };
}
