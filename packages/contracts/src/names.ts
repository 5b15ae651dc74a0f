/**
 * Names of streams, subjects and buckets on the bus (DESIGN.md, "Bus contract").
 *
 * Every name can carry a prefix so that tests, and several tracehub installations on one
 * NATS server, never see each other's traffic: with prefix `t1`, stream `TRACE_RAW` becomes
 * `t1_TRACE_RAW` and subject `raw.qs.rig7.uart0` becomes `t1.raw.qs.rig7.uart0`.
 */

export const PROTOCOLS = ['qs', 'stp', 'swd'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export function isProtocol(value: string): value is Protocol {
  return (PROTOCOLS as readonly string[]).includes(value);
}

/** Rig and link names become subject tokens, so they may not hold dots, wildcards or spaces. */
export const NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const nameRegExp = new RegExp(NAME_PATTERN);

export function isValidName(value: string): boolean {
  return nameRegExp.test(value);
}

export function assertValidName(what: 'rig' | 'link' | 'prefix', value: string): void {
  if (!isValidName(value)) {
    throw new Error(
      `invalid ${what} name ${JSON.stringify(value)}: use 1 to 64 letters, digits, '_' or '-' (it becomes a NATS subject token)`,
    );
  }
}

/** The JetStream stream that holds KV bucket `bucket` (NATS keeps a bucket as a stream of that name). */
export function bucketStream(bucket: string): string {
  return `KV_${bucket}`;
}

/** The subject of key `key` (or of a key pattern with `*`/`>`) in KV bucket `bucket`. */
export function bucketKeySubject(bucket: string, key: string): string {
  return `$KV.${bucket}.${key}`;
}

/** A link as the bus names it: the protocol it speaks, its rig, and its name on the rig. */
export interface LinkAddress {
  protocol: Protocol;
  rig: string;
  link: string;
}

export interface BusNames {
  readonly prefix: string;
  readonly rawStream: string;
  readonly recStream: string;
  readonly decoderStateBucket: string;
  readonly leaseBucket: string;
  /** Durable consumer name of the storage service on the record stream. */
  readonly storageConsumer: string;
  /** Durable consumer name of the storage service on the raw stream (it keeps the link's bytes). */
  readonly storageRawConsumer: string;
  /** Durable consumer name of a link's decoding on the raw stream (shared by every decoder worker). */
  decoderConsumer(link: LinkAddress): string;
  rawSubject(protocol: Protocol, rig: string, link: string): string;
  recSubject(protocol: Protocol, rig: string, link: string): string;
  ctlSubject(rig: string, link: string): string;
  /** Where a gateway says a link's session started (its first chunk is on the raw stream): decoders wake to claim it. */
  linkStartedSubject(protocol: Protocol, rig: string, link: string): string;
  /** Wildcard over the session-start notices of a protocol. */
  linkStartedFilter(protocol: Protocol): string;
  /** Wildcard over every raw subject of a protocol (or all protocols). */
  rawFilter(protocol?: Protocol): string;
  /** Wildcard over every record subject (`rec.>`), or those of one protocol / rig / link. */
  recFilter(filter?: { protocol?: Protocol; rig?: string; link?: string }): string;
  /** Reads a raw or record subject back into its parts; `undefined` when it is not one of ours. */
  parseSubject(subject: string): ParsedSubject | undefined;
}

export interface ParsedSubject {
  kind: 'raw' | 'rec';
  protocol: Protocol;
  rig: string;
  link: string;
}

export function busNames(prefix = ''): BusNames {
  if (prefix !== '') assertValidName('prefix', prefix);
  const s = prefix === '' ? '' : `${prefix}.`;
  const n = prefix === '' ? '' : `${prefix}_`;
  const subject = (kind: 'raw' | 'rec', protocol: Protocol, rig: string, link: string) => {
    assertValidName('rig', rig);
    assertValidName('link', link);
    return `${s}${kind}.${protocol}.${rig}.${link}`;
  };
  const depth = prefix === '' ? 0 : 1;
  return {
    prefix,
    rawStream: `${n}TRACE_RAW`,
    recStream: `${n}TRACE_REC`,
    decoderStateBucket: `${n}th_decoder_state`,
    leaseBucket: `${n}th_leases`,
    storageConsumer: `${n}th_storage`,
    storageRawConsumer: `${n}th_storage_raw`,
    // Without the prefix: consumers live inside the (prefixed) raw stream.
    decoderConsumer: ({ protocol, rig, link }) => `dec_${protocol}_${rig}_${link}`,
    rawSubject: (protocol, rig, link) => subject('raw', protocol, rig, link),
    recSubject: (protocol, rig, link) => subject('rec', protocol, rig, link),
    ctlSubject: (rig, link) => {
      assertValidName('rig', rig);
      assertValidName('link', link);
      return `${s}ctl.${rig}.${link}`;
    },
    linkStartedSubject: (protocol, rig, link) => {
      assertValidName('rig', rig);
      assertValidName('link', link);
      return `${s}started.${protocol}.${rig}.${link}`;
    },
    linkStartedFilter: (protocol) => `${s}started.${protocol}.>`,
    rawFilter: (protocol) => (protocol ? `${s}raw.${protocol}.>` : `${s}raw.>`),
    recFilter: (filter = {}) => {
      if (!filter.protocol && !filter.rig && !filter.link) return `${s}rec.>`;
      return `${s}rec.${filter.protocol ?? '*'}.${filter.rig ?? '*'}.${filter.link ?? '*'}`;
    },
    parseSubject: (subjectText) => {
      const parts = subjectText.split('.');
      if (parts.length !== 4 + depth) return undefined;
      if (depth === 1 && parts[0] !== prefix) return undefined;
      const [kind, protocol, rig, link] = parts.slice(depth);
      if ((kind !== 'raw' && kind !== 'rec') || !isProtocol(protocol)) return undefined;
      return { kind, protocol, rig, link };
    },
  };
}
