import type { RecordsValues, StateChange } from '@tracehub/contracts';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/**
 * The tables of tracehub's Postgres database, one type per table (see `migrations/`).
 *
 * Column types follow what `createDb` parses: `bigint` columns come back as JS `bigint`
 * (exact: host clocks in ns exceed 2^53), `numeric` as a decimal `string`, `timestamptz`
 * as `Date`, `jsonb` as parsed JSON, `bytea` as `Buffer`.
 */
export interface Database {
  rigs: RigsTable;
  links: LinksTable;
  sessions: SessionsTable;
  dictionaries: DictionariesTable;
  record_blocks: RecordBlocksTable;
  link_settings_changes: LinkSettingsChangesTable;
  link_chunks: LinkChunksTable;
  retention: RetentionTable;
  reporter_endpoints: ReporterEndpointsTable;
  api_replicas: ApiReplicasTable;
  record_losses: RecordLossesTable;
}

/** A bigint column: read as `bigint`, written from a bigint, a safe integer or a decimal string. */
export type Int8 = ColumnType<bigint, bigint | number | string, bigint | number | string>;
/** A timestamptz column with a default of now(). */
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export interface RigsTable {
  name: string;
  first_seen: CreatedAt;
  last_seen: CreatedAt;
}

/** Per-link codec settings (STP version, little-endian masters, output protocol, ...). */
export type LinkSettings = Record<string, unknown>;

export interface LinksTable {
  id: Generated<number>;
  rig: string;
  name: string;
  protocol: string;
  settings: ColumnType<LinkSettings, LinkSettings | undefined, LinkSettings>;
}

/** One change of a link's settings (the link page's history). */
export interface LinkSettingsChangesTable {
  id: Generated<bigint>;
  link_id: number;
  changed_at: CreatedAt;
  /** Who: the name the request gave, and the token's fingerprint (API), or the OS user (CLI). */
  changed_by: string;
  /** Through what: `api`, `cli`, `dashboard`. */
  via: string;
  applies: 'next-session' | 'now';
  previous: LinkSettings;
  settings: LinkSettings;
}

export interface SessionsTable {
  id: string;
  rig: string;
  link: string;
  protocol: string;
  started_at: Date;
  ended_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_chunk: ColumnType<number, number | undefined, number>;
  record_count: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  error_count: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  gap_count: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  lost_bytes: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  target_info: ColumnType<Record<string, unknown> | null, Record<string, unknown> | null | undefined>;
  first_host_time: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_host_time: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** How many records the session has in all; set when its end has been decoded. */
  record_total: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Raw chunks of the link stored for the session (`link_chunks`), their bytes, and the bytes the gateway said it dropped. */
  link_chunks: ColumnType<number, number | undefined, number>;
  link_bytes: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  link_lost_bytes: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  /** Link settings the gateway sent with the session's chunks (laid over the link's own when decoding); null if none. */
  link_settings: ColumnType<
    Record<string, unknown> | null,
    Record<string, unknown> | null | undefined,
    Record<string, unknown> | null
  >;
  /** Records its decoder published that Postgres refused as data (each batch a `record_losses` row). */
  records_refused: ColumnType<bigint, bigint | number | undefined, bigint | number>;
}

export interface DictionariesTable {
  session: string;
  /** Dictionary kind: `obj`, `fun`, `sig`, `usr`, ... */
  kind: string;
  /** The key as text (address in hex, signal number, ...). */
  key: string;
  name: string;
}

/**
 * A block of consecutive records of one session: the summary queries prune on (with the
 * distinct values of its records, `RecordsValues`), and the records themselves compressed in
 * `data` (see `blocks/record-block.ts`).
 */
export interface RecordBlocksTable extends RecordsValues {
  id: Generated<bigint>;
  session: string;
  first_seq: Int8;
  last_seq: Int8;
  /** The earliest record's host time (µs precision); the partition key. */
  host_time: ColumnType<Date, Date | string, Date | string>;
  min_host_ns: Int8;
  max_host_ns: Int8;
  rig: string;
  link: string;
  protocol: string;
  record_count: number;
  min_target_ts: ColumnType<string | null, string | null, string | null>;
  max_target_ts: ColumnType<string | null, string | null, string | null>;
  first_chunk: number;
  last_chunk: number;
  error_count: number;
  gap_count: number;
  lost_bytes: Int8;
  /** Per active object, the last state it entered in the block. */
  states: ColumnType<Record<string, StateChange> | null, string | null, string | null>;
  /** What a comparison of two sessions reads of the block (migration 0013); null in blocks written before. */
  digest: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  /** Target segments of the block's first and last timed records (migration 0012; null: none, or not summarized). */
  target_first_segment: number | null;
  target_last_segment: number | null;
  /** Least and greatest target time (ticks) of its timed records. */
  min_target_time: ColumnType<string | null, string | null, string | null>;
  max_target_time: ColumnType<string | null, string | null, string | null>;
  /** Records without a target time. */
  target_untimed: number | null;
  /** Lanes `target_index` names by position (null: the link itself). */
  target_lanes: Array<string | null> | null;
  /** Per record its lane, error flag, segment and time (contracts' `TargetIndex`), packed (`blocks/packed-column.ts`); null: not summarized. */
  target_index: Buffer | null;
  /** State machines of its QEP records, counted (`MachineTallies` as packed JSON, `unpackMachines`; null: none, or not summarized). */
  machines: Buffer | null;
  /** `BlockCodec` of `data`. */
  codec: number;
  /** Bytes of the records' JSON before compression. */
  byte_count: number;
  data: Buffer;
}

/** A block of consecutive raw chunks of one session, compressed (see `blocks/link-chunk-block.ts`). */
export interface LinkChunksTable {
  session: string;
  first_chunk: number;
  last_chunk: number;
  /** Receive time of the first chunk (µs precision); the partition key. */
  host_time: ColumnType<Date, Date | string, Date | string>;
  chunk_count: number;
  /** Bytes of link data in the block, uncompressed. */
  byte_count: number;
  /** Sum of the chunks' `th-lost`. */
  lost_bytes: Int8;
  /** The block holds the session's end-of-session chunk. */
  eos: boolean;
  /** `BlockCodec` of `data`. */
  codec: number;
  data: Buffer;
}

/** The retention last applied (one row). */
export interface RetentionTable {
  singleton: ColumnType<boolean, boolean | undefined, never>;
  days: number;
  /** Partitions of days before this instant were dropped. */
  cutoff: Date;
  applied_at: Date;
}

export type RigRow = Selectable<RigsTable>;
export type LinkRow = Selectable<LinksTable>;
export type SessionRow = Selectable<SessionsTable>;
export type NewSession = Insertable<SessionsTable>;
export type DictionaryRow = Selectable<DictionariesTable>;
export type RecordBlockRow = Selectable<RecordBlocksTable>;

/** A PalmTrace Reporter endpoint, leased to the API process that serves it (migration 0009). */
export interface ReporterEndpointsTable {
  id: string;
  source: 'config' | 'api';
  /** The endpoint as given (POST /reporters body, PALMTRACE_REPORTERS entry). */
  config: ColumnType<Record<string, unknown>, Record<string, unknown>, Record<string, unknown>>;
  created_at: CreatedAt;
  /** The API process serving it, until `lease_until`; null: nobody yet (or given back). */
  owner: string | null;
  lease_until: Date | null;
  /** Its status as the owner last wrote it, at `status_at`. */
  status: Record<string, unknown> | null;
  status_at: Date | null;
}

/** An API process alive until `seen_until` (its heartbeat). */
export interface ApiReplicasTable {
  id: string;
  started_at: CreatedAt;
  seen_until: Date;
}

/** Records storage could not store, per message (migration 0010). */
export interface RecordLossesTable {
  id: Generated<bigint>;
  session: string;
  chunk: number;
  first_seq: Int8 | null;
  last_seq: Int8 | null;
  records: number;
  reason: string;
  lost_at: CreatedAt;
}
