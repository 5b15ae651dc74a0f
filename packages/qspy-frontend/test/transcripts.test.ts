// Replays of the captured qspy 7.4.0 sessions: every datagram sent to the front-end and every
// QS-RX frame written to the target must be qspy's, byte for byte and in order.

import { encodeFrame, QS_RX_NAMES } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { Lines } from '../src/protocol.js';
import { dictionaryRecords, fromHex, hex, readTranscript, replay, splitFrames, tappedFrames } from './transcript.js';

function textLine(seq: number, rec: number, text: string): string {
  return hex(Uint8Array.from([seq, 0, rec, ...Buffer.from(text, 'latin1')]));
}

describe('replays of qspy 7.4.0 sessions', () => {
  it('s1: attach, every packet type with no target, sequence gaps, re-attach, legacy attach, detach, shutdown', () => {
    // 1t ends with qspy terminated (SIGTERM) while attached: its DETACH.
    const r = replay('s1_attach_no_target.txt');
    expect(r.actual).toEqual(r.expected);
    expect(r.frames).toEqual([]);
  });

  it('s10: a whole channels=3 session with test_philo (target info, dictionaries, every command class, reset)', () => {
    const r = replay('s10_channels3_full.txt', { reconnectIn: ['3y'] });
    expect(r.actual).toEqual(r.expected);
    const tapped = tappedFrames('s10_tcp_tap.txt');
    expect(r.frames.join('')).toEqual(tapped.join(''));
    // One frame per command, in order.
    expect(r.frames).toEqual(splitFrames(tapped.join('')));
  });

  it('s3: channels 3 then 1 then 2 on one attachment; the QS-RX frames of the whole session', () => {
    // From 3l the front-end is text-only, so the target's records are not in this capture: they
    // come from s10, the same commands on the same target build with channels=3.
    const textOnly = ['3m', '3n', '3o', '3p', '3q', '3r', '3s', '3t', '3u', '3v', '3w', '3x', '3y'];
    const r = replay('s3_fe_with_target.txt', {
      reconnectIn: ['3y'],
      answersFrom: { transcript: 's10_channels3_full.txt', sections: textOnly },
    });
    expect(r.actual).toEqual(r.expected);
    expect(r.frames.join('')).toEqual(tappedFrames('s3_tcp_tap_qspy_target.txt').join(''));
  });

  it('s2: a second front-end is locked out, a crashed one holds the port, the same port gets it back; malformed datagrams', () => {
    const r = replay('s2_multi_fe_and_errors.txt');
    const expected = [...r.expected];
    // 2c: front-end A (43120) closed its socket without DETACH; qspy still sent it a WARN line
    // for each of B's two ATTACHes (its counter shows it: the next line to 43120 has seq 5).
    const warnA = (seq: number) => ({ port: 43120, hex: textLine(seq, 128, Lines.socketInUse), section: '2c' });
    expected.splice(
      expected.findIndex((s) => s.section === '2d'),
      0,
      warnA(3),
      warnA(4),
    );
    // 2f: qspy re-ran the previous ATTACH for a 1-byte datagram; the port ignores it, state
    // included (spec 13.2), so B's next datagram shows as a gap in its sequence.
    const f = expected.findIndex((s) => s.section === '2f');
    expect(expected[f].hex).toBe('0180');
    expected[f] = { port: 55432, hex: textLine(2, 128, Lines.discontinuity(1, 2)), section: '2g' };
    // 2g: qspy overran its 512-byte encode buffer (its counter jumped to 0xFC) and sent 605
    // bytes; the port refuses the frame with an error line and sends nothing to the target.
    const g = expected.findIndex((s) => s.section === '2g' && s.hex.startsWith('fc'));
    expected[g] = { port: 55432, hex: textLine(3, 128, Lines.frameTooLong(1, 605, 512)), section: '2g' };
    expect(r.actual).toEqual(expected);
    // 2h: qspy exited on the zero-length datagram; the port ignored it and B is still attached.
    expect(r.frontEnd.status()).toMatchObject({ peer: { port: 55432 }, channels: 2, ignored: 2 });
    expect(r.frames).toEqual([]);
  });

  it('s7: object-scoped signals, QS_CMD enum vs user dictionary by version, 4-byte pointers, escaping, target-side errors', () => {
    const r = replay('s7_fake_target.txt', {
      // 7g: a record with a bad checksum (user record 102, the fake target's next seq 10)
      // before the one with the gap; qspy forwards neither the bad frame nor prints its payload.
      at: { '7g': (t) => t.targetBytes(badChecksum(10, 102, Uint8Array.of(1, 2, 3))) },
    });
    expect(r.actual).toEqual(r.expected);
    expect(r.frames.map(decodeFrame)).toEqual(receivedFrames('s7_fake_target.txt'));
  });

  it('s8: QS_EMPTY never forwarded, a 500-byte record forwarded whole, a 600-byte record dropped with error lines', () => {
    const r = replay('s8_empty_and_big_records.txt', {
      at: {
        '#    QS_EMPTY': (t) => t.targetRecord(2, 0),
        '#    600-byte': (t) => t.targetRecord(4, 100, new Uint8Array(598)),
      },
    });
    expect(r.actual).toEqual(r.expected);
  });

  it('s11: a stray packet latches the port, ATTACH with channels 0, DETACH with a payload detaches', () => {
    const r = replay('s11_forced_exit_and_latch.txt');
    expect(r.actual).toEqual(r.expected);
    expect(r.events.filter((e) => e.kind === 'detached')).toEqual([
      { kind: 'detached', peer: { address: '127.0.0.1', port: 44304 }, shutdownRequested: true },
    ]);
    expect(r.frontEnd.status().peer).toBeNull();
  });

  it('s12: unmodified QView: attach channels 1, INFO, target info, DETACH on shutdown', () => {
    const r = replay('s12_qview_udp_tap.txt');
    expect(r.actual).toEqual(r.expected);
    expect(r.actual.map((s) => s.hex).slice(-1)).toEqual(['0281']);
  });

  it('s4: unmodified qutest.py running test_philo: every QS-RX frame qspy wrote to the target', () => {
    // qutest attaches text-only, so only the target-info records are in the capture; the
    // dictionaries the target sends after each reset are those of the same build in s10.
    const dictionaries = dictionaryRecords('s10_channels3_full.txt', '3y');
    const r = replay('s4_philo_udp_tap.txt', {
      afterTargetInfo: (t) => {
        for (const d of dictionaries) t.targetRecord(d[0], d[1], d.subarray(2));
      },
    });
    expect(r.frames.join('')).toEqual(tappedFrames('s4_philo_tcp_tap.txt').join(''));
  });
});

function badChecksum(seq: number, id: number, payload: Uint8Array): Uint8Array {
  const frame = encodeFrame(seq, id, payload);
  frame[frame.length - 2] ^= 0x55;
  return frame;
}

/** `seq=N QS_RX_NAME payload=..` of a frame written to the target, as the fake target logged it. */
function decodeFrame(frameHex: string): string {
  const stuffed = fromHex(frameHex);
  const plain: number[] = [];
  for (let i = 0; i < stuffed.length - 1; i++) plain.push(stuffed[i] === 0x7d ? stuffed[++i] ^ 0x20 : stuffed[i]);
  const payload = plain.slice(2, -1).map((b) => b.toString(16).padStart(2, '0'));
  return `seq=${plain[0]} ${QS_RX_NAMES[plain[1]]} payload=${payload.join(' ')}`;
}

function receivedFrames(name: string): string[] {
  return readTranscript(name)
    .filter((e) => e.kind === 'comment' && e.text.includes('target received frame:'))
    .map((e) => {
      const m = /target received frame: (seq=\d+ \w+ payload=[0-9a-f ]*?) chk_ok=True/.exec(
        (e as { text: string }).text,
      );
      if (!m) throw new Error(`cannot read ${(e as { text: string }).text}`);
      return m[1].replace(/payload= $/, 'payload=');
    });
}
