import type { QsTargetConfig } from './config.js';
import { QsRecordId as Id } from './constants.js';
import { dec, zeroPad } from './format.js';
import { NO_FIELDS, NO_TS, type RecordParser } from './record-context.js';

/**
 * What the target says of itself (spec 4, 5): its info (the configuration every other record
 * is read with), its reset before QS 5.5 (QS_EMPTY), QF_RUN and assertion failures.
 */

/** The notices of a target info that discards the dictionaries: qspy 7.4's, and 8.x's. */
const MISMATCH_7X = '\n   <QSPY-> Target info mismatch (dictionaries discarded)';
const CHANGED_8X = '\n   <QSPY-> Target info changed (dictionaries discarded)';

/**
 * QS_TARGET_INFO: the target's version, sizes and build, as QS 7.x or 8.x lays them out. The
 * decoder takes the configuration for every record after it.
 */
export const parseTargetInfo: RecordParser = (d, r, _c, _id, raw) => {
  const b = r.buf;
  const isReset = r.u(1);
  let version: number;
  let bigEndian: boolean;
  let reset: boolean;
  let versionWord: number;
  let framework: number | null = null;
  let releaseDate: number | null = null;
  if ((isReset & 3) === 2 && r.remaining >= 17) {
    // QP 8.x layout (spec 12): flags byte (bit 6 reset, bit 7 big-endian, bits 2-3 framework),
    // a bit-inverted u32 (release date * 10000 + version), then the same 13 bytes.
    const v = ~r.u(4) >>> 0;
    version = v % 10000;
    releaseDate = Math.floor(v / 10000);
    framework = (isReset >> 2) & 3;
    bigEndian = (isReset & 0x80) !== 0;
    reset = (isReset & 0x40) !== 0;
    // 8.x QSPY prints the version alone; there is no version word with an endianness bit.
    versionWord = version;
  } else {
    versionWord = r.u(2);
    version = versionWord & 0x7fff;
    bigEndian = (versionWord & 0x8000) !== 0;
    reset = isReset !== 0;
  }
  const p = r.pos;
  // Five bytes of size nibbles, read below from the buffer.
  for (let i = 0; i < 5; i++) r.u(1);
  const maxActive = r.u(1);
  const poolsRates = r.u(1);
  const build = [r.u(1), r.u(1), r.u(1), r.u(1), r.u(1), r.u(1)];
  if (r.remaining !== 0) return d.lengthError(Id.QS_TARGET_INFO, raw);
  const next: QsTargetConfig = {
    version,
    bigEndian,
    sigSize: b[p] & 0x0f,
    eventSize: (b[p] >> 4) & 0x0f,
    queueCtrSize: b[p + 1] & 0x0f,
    teCtrSize: (b[p + 1] >> 4) & 0x0f,
    poolBlkSize: b[p + 2] & 0x0f,
    poolCtrSize: (b[p + 2] >> 4) & 0x0f,
    objPtrSize: b[p + 3] & 0x0f,
    funPtrSize: (b[p + 3] >> 4) & 0x0f,
    timeSize: b[p + 4] & 0x0f,
    build,
    releaseDate: releaseDate ?? 0,
    framework: framework ?? 0,
  };
  const mismatch = d.takeTargetConfig(next, reset);
  const stamp = `${zeroPad(build[5], 2)}${zeroPad(build[4], 2)}${zeroPad(build[3], 2)}_${zeroPad(build[2], 2)}${zeroPad(build[1], 2)}${zeroPad(build[0], 2)}`;
  let text = `${NO_TS}${reset ? 'Trg-RST ' : 'Trg-Info'} QP-Ver=${versionWord},Build=${stamp}`;
  if (mismatch) text += version >= 800 ? CHANGED_8X : MISMATCH_7X;
  return {
    kind: 'info',
    type: Id.QS_TARGET_INFO,
    name: 'QS_TARGET_INFO',
    targetTs: null,
    fields: {
      reset,
      version,
      bigEndian,
      sigSize: next.sigSize,
      eventSize: next.eventSize,
      queueCtrSize: next.queueCtrSize,
      teCtrSize: next.teCtrSize,
      poolBlkSize: next.poolBlkSize,
      poolCtrSize: next.poolCtrSize,
      objPtrSize: next.objPtrSize,
      funPtrSize: next.funPtrSize,
      timeSize: next.timeSize,
      maxActive,
      maxEventPools: poolsRates & 0x0f,
      maxTickRates: (poolsRates >> 4) & 0x0f,
      build: `20${stamp}`,
      mismatch,
      ...(framework === null ? {} : { framework, releaseDate }),
    },
    text,
    raw,
  };
};

/** QS_EMPTY: nothing printed (before QS 5.5 it announced a target reset). */
export const parseEmpty: RecordParser = (d, r, c, id, raw) => {
  if (c.version >= 550) {
    return { kind: 'info', type: 0, name: 'QS_EMPTY', targetTs: null, fields: {}, text: '', raw };
  }
  if (r.remaining !== 0) return d.lengthError(id, raw);
  d.dicts.resetAll();
  if (!d.fieldsWanted) return d.done(id, 'info', null, `${NO_TS}Trg-RST  ${c.version}`, NO_FIELDS, raw);
  return d.done(id, 'info', null, `${NO_TS}Trg-RST  ${c.version}`, { reset: true }, raw);
};

/** QS_QF_RUN: the framework started running. */
export const parseQfRun: RecordParser = (d, _r, _c, id, raw) => {
  return d.done(id, 'info', null, `${NO_TS}QF_RUN`, {}, raw);
};

/** QS_ASSERT_FAIL: an assertion failed in the target, by module and location. */
export const parseAssertFail: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const loc = r.u(2);
  const mod = r.str();
  const text = d.tsLine(t, ` =ASSERT= Mod=${mod},Loc=${dec(loc)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { module: r.lastStr, location: loc }, raw);
};
