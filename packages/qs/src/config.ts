/**
 * Target configuration: the field sizes a QS stream is laid out with (spec 4).
 */

/** Size overrides used until a target-info record arrives (QSPY's command-line options, spec 4.3). */
export interface QsDecoderOptions {
  /** QS version as a number, e.g. 700 for 7.0.0 (`-v`). Default 700. */
  version?: number;
  /** Object pointer size in bytes (`-O`, `--obj-ptr-size`). Default 4. */
  objPtrSize?: number;
  /** Function pointer size in bytes (`-F`, `--fun-ptr-size`). Default 4. */
  funPtrSize?: number;
  /** Timestamp size in bytes (`-T`, `--time-size`). Default 4. */
  timeSize?: number;
  /** Signal size in bytes (`-S`, `--sig-size`). Default 2. */
  sigSize?: number;
  /** Event-size field size in bytes (`-E`, `--event-size`). Default 2. */
  eventSize?: number;
  /** Event-queue counter size in bytes (`-Q`, `--queue-ctr-size`). Default 1. */
  queueCtrSize?: number;
  /** Memory-pool counter size in bytes (`-P`, `--pool-ctr-size`). Default 2. */
  poolCtrSize?: number;
  /** Memory-pool block-size field size in bytes (`-B`, `--pool-blk-size`). Default 2. */
  poolBlkSize?: number;
  /** Time-event counter size in bytes (`-C`, `--te-ctr-size`). Default 4. */
  teCtrSize?: number;
}

/** The sizes and identity of a target build, as the target-info record announces them. */
export interface QsTargetConfig {
  version: number;
  bigEndian: boolean;
  objPtrSize: number;
  funPtrSize: number;
  timeSize: number;
  sigSize: number;
  eventSize: number;
  queueCtrSize: number;
  poolCtrSize: number;
  poolBlkSize: number;
  teCtrSize: number;
  /** Build stamp bytes: second, minute, hour, day, month, year-2000. */
  build: number[];
  /** QP 8.x target info: the release date (yymm) and framework (1 QP/C, 2 QP/C++); absent: 0. */
  releaseDate?: number;
  framework?: number;
}

export const QS_DEFAULT_OPTIONS: Required<QsDecoderOptions> = Object.freeze({
  version: 700,
  objPtrSize: 4,
  funPtrSize: 4,
  timeSize: 4,
  sigSize: 2,
  eventSize: 2,
  queueCtrSize: 1,
  poolCtrSize: 2,
  poolBlkSize: 2,
  teCtrSize: 4,
});

/** qspy's size options by their letter (`-O8` sets objPtrSize): the command line and `.dic` files. */
export const QSPY_SIZE_OPTIONS: Readonly<Record<string, keyof Omit<QsDecoderOptions, 'version'>>> = Object.freeze({
  O: 'objPtrSize',
  F: 'funPtrSize',
  T: 'timeSize',
  S: 'sigSize',
  E: 'eventSize',
  Q: 'queueCtrSize',
  P: 'poolCtrSize',
  B: 'poolBlkSize',
  C: 'teCtrSize',
});

const SIZE_KEYS = [
  'objPtrSize',
  'funPtrSize',
  'timeSize',
  'sigSize',
  'eventSize',
  'queueCtrSize',
  'poolCtrSize',
  'poolBlkSize',
  'teCtrSize',
] as const;

/** Options with defaults filled in; sizes must be 1, 2, 4 or 8 (what QSPY can read). */
export function resolveOptions(options: QsDecoderOptions = {}): Required<QsDecoderOptions> {
  const resolved = { ...QS_DEFAULT_OPTIONS };
  for (const key of SIZE_KEYS) {
    const v = options[key];
    if (v === undefined) continue;
    if (v !== 1 && v !== 2 && v !== 4 && v !== 8) throw new RangeError(`${key} must be 1, 2, 4 or 8 bytes, not ${v}`);
    resolved[key] = v;
  }
  if (options.version !== undefined) {
    if (!Number.isInteger(options.version) || options.version < 0 || options.version > 0x7fff) {
      throw new RangeError(`version must be an integer such as 740, not ${options.version}`);
    }
    resolved.version = options.version;
  }
  return resolved;
}

export function configFromOptions(options: Required<QsDecoderOptions>): QsTargetConfig {
  return {
    version: options.version,
    bigEndian: false,
    objPtrSize: options.objPtrSize,
    funPtrSize: options.funPtrSize,
    timeSize: options.timeSize,
    sigSize: options.sigSize,
    eventSize: options.eventSize,
    queueCtrSize: options.queueCtrSize,
    poolCtrSize: options.poolCtrSize,
    poolBlkSize: options.poolBlkSize,
    teCtrSize: options.teCtrSize,
    build: [0, 0, 0, 0, 0, 0],
  };
}

/**
 * Whether two configurations are of the same build: the version, every size and the build
 * stamp (not the byte order, which a dictionary file does not fix).
 */
export function sameBuild(a: Omit<QsTargetConfig, 'bigEndian'>, b: Omit<QsTargetConfig, 'bigEndian'>): boolean {
  return (
    a.version === b.version &&
    a.objPtrSize === b.objPtrSize &&
    a.funPtrSize === b.funPtrSize &&
    a.timeSize === b.timeSize &&
    a.sigSize === b.sigSize &&
    a.eventSize === b.eventSize &&
    a.queueCtrSize === b.queueCtrSize &&
    a.poolCtrSize === b.poolCtrSize &&
    a.poolBlkSize === b.poolBlkSize &&
    a.teCtrSize === b.teCtrSize &&
    a.build.every((v, i) => v === b.build[i])
  );
}
