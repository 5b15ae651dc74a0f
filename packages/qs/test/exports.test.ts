import {
  escapedFrameLength,
  escapeFrame,
  QS_RECORD_GROUPS,
  QS_RECORD_NAMES,
  QsDecoderRecordId,
  QsRecordId,
  QsRecordName,
  qsRecordGroup,
  qsTextBytes,
  writeEscapedFrame,
} from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { captureBytes, decodeChunked, qspyRun } from './helpers.js';

describe('what the codec exports to other packages', () => {
  it('escapes records back into the exact bytes of a clean capture', () => {
    for (const name of ['dpp_qv', 'defer', 'fmt_v64', 'fmt_v32s']) {
      const bytes = captureBytes(name);
      const frames = decodeChunked(bytes, [4096])
        .map((r) => r.raw)
        .filter((raw) => raw.length > 0);
      const total = frames.reduce((n, f) => n + escapedFrameLength(f), 0);
      const out = new Uint8Array(total);
      let at = 0;
      for (const f of frames) at = writeEscapedFrame(f, out, at);
      expect(at).toBe(total);
      expect(Buffer.from(out).equals(Buffer.from(bytes))).toBe(true);
      expect(Buffer.concat(frames.map(escapeFrame)).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('stuffs flag and escape bytes and closes with a flag', () => {
    expect(Buffer.from(escapeFrame(Uint8Array.of(0x7d, 0x01, 0x7e, 0x02))).toString('hex')).toBe('7d5d017d5e027e');
    expect(Buffer.from(escapeFrame(new Uint8Array(0))).toString('hex')).toBe('7e');
  });

  it('names every predefined and decoder record as a constant', () => {
    expect(QsRecordName.SEQ_GAP).toBe('SEQ_GAP');
    expect(QsRecordName.QS_TARGET_INFO).toBe('QS_TARGET_INFO');
    for (const [name, id] of Object.entries(QsRecordId)) {
      if (id < 81) expect(QS_RECORD_NAMES[id]).toBe(name);
    }
    for (const name of Object.keys(QsDecoderRecordId))
      expect(QsRecordName[name as keyof typeof QsRecordName]).toBe(name);
  });

  it('puts each record in its spec 5 group', () => {
    const group = (type: number, kind: 'record' | 'dict' | 'info' | 'error' = 'record') =>
      qsRecordGroup({ kind, type });
    expect(group(QsRecordId.QS_QEP_DISPATCH)).toBe('SM');
    expect(group(QsRecordId.QS_QEP_TRAN_XP)).toBe('SM');
    expect(group(QsRecordId.QS_QF_ACTIVE_POST_ATTEMPT)).toBe('AO');
    expect(group(QsRecordId.QS_QF_ACTIVE_DEFER_ATTEMPT)).toBe('AO');
    expect(group(QsRecordId.QS_QF_EQUEUE_POST_ATTEMPT)).toBe('EQ');
    expect(group(QsRecordId.QS_QF_MPOOL_GET_ATTEMPT)).toBe('MP');
    expect(group(QsRecordId.QS_QF_TIMEEVT_POST)).toBe('TE');
    expect(group(QsRecordId.QS_QF_NEW_ATTEMPT)).toBe('QF');
    expect(group(QsRecordId.QS_QF_TICK)).toBe('QF');
    expect(group(QsRecordId.QS_QF_INT_ENABLE)).toBe('QF');
    expect(group(QsRecordId.QS_SCHED_IDLE)).toBe('SC');
    expect(group(QsRecordId.QS_PEEK_DATA)).toBe('TEST');
    expect(group(QsRecordId.QS_ASSERT_FAIL)).toBe('ERROR');
    expect(group(QsRecordId.QS_SEM_TAKE)).toBe('SEM');
    expect(group(QsRecordId.QS_MTX_UNLOCK_ATTEMPT)).toBe('MTX');
    expect(group(QsRecordId.QS_QF_RUN)).toBe('INFO');
    expect(group(90)).toBe('INFO');
    expect(group(124)).toBe('USER');
    expect(group(QsRecordId.QS_SIG_DICT, 'dict')).toBe('DICT');
    expect(group(QsDecoderRecordId.SEQ_GAP, 'error')).toBe('ERROR');
    expect(new Set(QS_RECORD_GROUPS).size).toBe(QS_RECORD_GROUPS.length);
  });

  it('gives the bytes qspy wrote for texts with target bytes >= 0x80', () => {
    const run = qspyRun('random_latin1');
    const texts = decodeChunked(run.bytes, [4096], run.options)
      .map((r) => r.text)
      .filter((t) => t !== '');
    const bytes = Buffer.concat(texts.map((t) => Buffer.concat([qsTextBytes(t), Buffer.from('\n')])));
    const expected = Buffer.from(`${run.lines.join('\n')}\n`, 'latin1');
    expect(expected.some((b) => b >= 0x80)).toBe(true);
    expect(bytes.equals(expected)).toBe(true);
    // UTF-8 would not be: every byte >= 0x80 would become two.
    expect(Buffer.from(texts.join('\n'), 'utf8').equals(expected.subarray(0, -1))).toBe(false);
  });
});
