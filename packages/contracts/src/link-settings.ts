import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Protocol } from './names.js';

/**
 * How a link is decoded: one document per link, the same names everywhere (API body,
 * `tracehub link set name=value`, query parameters of a TRACEHUB_LINKS address,
 * `tracehub replay --name value`). Every setting is optional; what is left out takes the
 * codec's default.
 */

const size = (qspy: string, what: string) =>
  Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(4), Type.Literal(8)], {
    description: `${what} in bytes until the target info says otherwise (qspy ${qspy})`,
  });

/**
 * How a link's records show in a legacy Palm Reporter (the api's PalmTrace bridge), for links
 * of every protocol. A Reporter endpoint's own tables (`rigNumbers`, `modules`) name records
 * more precisely and win over these.
 */
const PalmTraceLinkSettingsProperties = {
  palmProcessId: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 0xffffffff,
      description: "PalmTrace Process ID of the link's records (default: the digits the rig name ends with)",
    }),
  ),
  palmModule: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 0xffff,
      description:
        "PalmTrace module (error class) of the link's records a Reporter's table does not name (default 0x8000)",
    }),
  ),
};

/**
 * How the target's clock reads as time, for links of every protocol. Applied when records are
 * read (the api), not when they are decoded: records keep their time in ticks, so a tick rate
 * set or corrected later holds for the records stored before it.
 */
const TargetTimeLinkSettingsProperties = {
  tickRate: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 1e12,
      description:
        "ticks per second of the target's timestamps (QS_TIME_SIZE counter, STM timestamps): target time in seconds; without it, in ticks",
    }),
  ),
};

/** Link settings that are not the codec's (a change of them is no reason to decode afresh). */
export const NOT_CODEC_LINK_SETTINGS: readonly string[] = [
  ...Object.keys(PalmTraceLinkSettingsProperties),
  ...Object.keys(TargetTimeLinkSettingsProperties),
];

/** QS: the target's sizes and version, for a target joined mid-run (qspy's -v -O -F -T -S ...). */
export const QsLinkSettingsSchema = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 0x7fff, description: 'QS version, e.g. 740 for 7.4.0 (qspy -v)' }),
    ),
    objPtrSize: Type.Optional(size('-O', 'object pointer size')),
    funPtrSize: Type.Optional(size('-F', 'function pointer size')),
    timeSize: Type.Optional(size('-T', 'timestamp size')),
    sigSize: Type.Optional(size('-S', 'signal size')),
    eventSize: Type.Optional(size('-E', 'event-size field size')),
    queueCtrSize: Type.Optional(size('-Q', 'event-queue counter size')),
    poolCtrSize: Type.Optional(size('-P', 'memory-pool counter size')),
    poolBlkSize: Type.Optional(size('-B', 'memory-pool block-size size')),
    teCtrSize: Type.Optional(size('-C', 'time-event counter size')),
    dictionaries: Type.Optional(
      Type.String({
        maxLength: 65_536,
        description:
          "a qspy .dic file's text (tracehub dict import), or on a command line or in a link address its path: its configuration and names from the start of every session, and its names again after each target info of the same build, as qspy -d <file>",
      }),
    ),
    ...PalmTraceLinkSettingsProperties,
    ...TargetTimeLinkSettingsProperties,
  },
  { additionalProperties: false },
);
export type QsLinkSettings = Static<typeof QsLinkSettingsSchema>;

const master = Type.Integer({ minimum: 0, maximum: 0xffff });
const pauseMs = (what: string) => Type.Number({ minimum: 0, maximum: 60_000, description: what });

/** STP (and SWD reverse-channel) links: what the stream itself cannot say. */
export const StpLinkSettingsSchema = Type.Object(
  {
    version: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'STP version (default 2)' })),
    littleEndianMasters: Type.Optional(
      Type.Array(master, { maxItems: 256, description: 'masters whose STM sends little-endian words' }),
    ),
    output: Type.Optional(
      Type.Union([Type.Literal('ost'), Type.Literal('phonet')], { description: 'output protocol (default ost)' }),
    ),
    resyncPauseMs: Type.Optional(pauseMs('v1: a pause this long resynchronises the stream, ms (default 1)')),
    maxPauseMs: Type.Optional(pauseMs('v1: longest pause inside a message, ms (default 100)')),
    start: Type.Optional(
      Type.Union([Type.Literal('synced'), Type.Literal('hot_plug'), Type.Literal('unsynchronised')], {
        description: "where a session starts: v1 'synced' or 'hot_plug', v2 'unsynchronised' or 'synced'",
      }),
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 255, description: 'SWD: trace box port / PhoNet sender (default 0x0B)' }),
    ),
    processor: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 255, description: 'SWD: processor index in the wrapper (default 0)' }),
    ),
    tickHz: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100_000_000_000,
        description:
          'STP v2: device timestamp ticks per second while the device sends no FREQ packet (default: ticks are ns); a FREQ packet overrides it',
      }),
    ),
    timeOffsetNs: Type.Optional(
      Type.Integer({
        minimum: -9_000_000_000_000_000,
        maximum: 9_000_000_000_000_000,
        description:
          'STP: the time base: output time = receive time + this offset, ns (default 0); a time base set on the live link changes it for the session, with the two 0x03 markers',
      }),
    ),
    ...PalmTraceLinkSettingsProperties,
    ...TargetTimeLinkSettingsProperties,
  },
  { additionalProperties: false },
);
export type StpLinkSettings = Static<typeof StpLinkSettingsSchema>;

export type LinkSettingsDocument = QsLinkSettings | StpLinkSettings;

/** The settings schema of a protocol (`swd` links take the STP document). */
export function linkSettingsSchema(protocol: Protocol): TObject {
  return protocol === 'qs' ? QsLinkSettingsSchema : StpLinkSettingsSchema;
}

export class LinkSettingsError extends Error {
  override name = 'LinkSettingsError';
}

/** Checks a settings document against its protocol's schema; throws naming the first wrong setting. */
export function validateLinkSettings(protocol: Protocol, settings: unknown): LinkSettingsDocument {
  const schema = linkSettingsSchema(protocol);
  const first = Value.Errors(schema, settings).First();
  if (!first) return settings as LinkSettingsDocument;
  // A list's wrong item is the list's fault as a person sees it: the message names the setting.
  const setting = first.path.split('/')[1] ?? '';
  if (first.path && !(setting in schema.properties)) {
    throw new LinkSettingsError(
      `unknown ${protocol} link setting '${setting}': use ${Object.keys(schema.properties).join(', ')}`,
    );
  }
  const property = schema.properties[setting];
  if (!property) throw new LinkSettingsError(`the ${protocol} link settings must be an object of settings by name`);
  const what = property.description ? `: ${property.description}` : '';
  throw new LinkSettingsError(`${protocol} link setting ${setting} must be ${acceptedValues(property)}${what}`);
}

/** What a setting's schema accepts, in words: `1, 2, 4 or 8`, `a whole number from 0 to 255`. */
function acceptedValues(schema: TSchema): string {
  if (schema.anyOf) {
    const options = (schema.anyOf as TSchema[]).map((o) =>
      o.const === undefined ? acceptedValues(o) : String(o.const),
    );
    return options.length > 1 ? `${options.slice(0, -1).join(', ')} or ${options.at(-1)}` : (options[0] ?? 'valid');
  }
  const range =
    schema.minimum !== undefined && schema.maximum !== undefined ? ` from ${schema.minimum} to ${schema.maximum}` : '';
  if (schema.type === 'integer') return `a whole number${range}`;
  if (schema.type === 'number') return `a number${range}`;
  if (schema.type === 'array')
    return `a list of at most ${schema.maxItems ?? 'any number of'} values, each ${schema.items ? acceptedValues(schema.items) : 'valid'}`;
  if (schema.type === 'string') return schema.maxLength ? `text of at most ${schema.maxLength} characters` : 'text';
  return 'a valid value';
}

/**
 * Settings written as text, `name=value` pairs (query parameters of a link address, `tracehub
 * link set`), turned into a checked document: numbers, `1,2,0x11` lists and names as the
 * schema wants them.
 */
export function linkSettingsFromText(
  protocol: Protocol,
  pairs: Iterable<[string, string]>,
  /**
   * Where settings come from a command line or a link address, a QS `dictionaries` value of
   * one line is a path to a `.dic` file (a file's text has several lines): this reads it.
   */
  readDictionaryFile?: (path: string) => string,
): LinkSettingsDocument {
  const schema = linkSettingsSchema(protocol);
  const out: Record<string, unknown> = {};
  for (const [name, text] of pairs) {
    const property = schema.properties[name];
    if (!property) {
      throw new LinkSettingsError(
        `unknown ${protocol} link setting '${name}': use ${Object.keys(schema.properties).join(', ')}`,
      );
    }
    if (protocol === 'qs' && name === 'dictionaries' && readDictionaryFile && !text.includes('\n')) {
      out[name] = dictionaryFileText(text, readDictionaryFile);
      continue;
    }
    out[name] =
      property.type === 'array'
        ? listOfNumbers(text)
        : protocol === 'qs' && name === 'version'
          ? qsVersion(text)
          : scalar(text);
  }
  return validateLinkSettings(protocol, out);
}

function dictionaryFileText(path: string, read: (path: string) => string): string {
  try {
    return read(path);
  } catch (err) {
    throw new LinkSettingsError(
      `qs link setting dictionaries: '${path}' is neither a .dic file's text nor a file that can be read (${(err as Error).message})`,
    );
  }
}

/** `7.4`, `7.4.0` or `740` -> 740 (qspy's -v takes the dotted form). */
function qsVersion(text: string): unknown {
  const m = /^(\d+)\.(\d)(?:\.(\d))?$/.exec(text.trim());
  return m ? Number(m[1]) * 100 + Number(m[2]) * 10 + Number(m[3] ?? 0) : scalar(text);
}

function scalar(text: string): unknown {
  const t = text.trim();
  if (/^(0x[0-9a-f]+|-?\d+(\.\d+)?)$/i.test(t)) return Number(t);
  return t;
}

function listOfNumbers(text: string): unknown[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(scalar);
}
