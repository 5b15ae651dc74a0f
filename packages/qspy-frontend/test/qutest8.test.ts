// QUTest 8.1.3 through the front-end port, as recorded (fixtures/qutest8/README.md): qutest's
// datagrams played again into a front-end whose target is the same scripted QP 8.1.3 target.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QspyFrontEnd } from '../src/front-end.js';
import { ScriptedTarget } from '../src/scripted-target.js';
import { QsTargetLink } from '../src/target-link.js';

const dir = new URL('./fixtures/qutest8/', import.meta.url);
const QUTEST = { address: '127.0.0.1', port: 50000 };

/** The recording's target (fixtures/qutest8/target.json): its dictionaries after every reset, as a QP target sends them. */
const spec = JSON.parse(readFileSync(new URL('target.json', dir), 'utf8')) as {
  options: { version: number; objPtrSize: number; funPtrSize: number };
  objects: [string, string][];
  signals: [number, string, string][];
  commands: [number, string][];
};
class RecordedTarget extends ScriptedTarget {
  override start(): void {
    super.start({
      objects: spec.objects.map(([address, name]) => [BigInt(address), name]),
      signals: spec.signals.map(([sig, obj, name]) => [sig, BigInt(obj), name]),
      commands: spec.commands,
    });
  }
}

function tap(file = 'qutest_udp_tap.txt'): { direction: string; hex: string }[] {
  const out: { direction: string; hex: string }[] = [];
  for (const line of readFileSync(new URL(file, dir), 'latin1').split('\n')) {
    const m = /^\s*[\d.]+ (FE->QSPY|QSPY->FE) len=\s*(\d+) ([0-9a-f ]*)$/.exec(line);
    if (!m) continue;
    const hex = m[3].replace(/\s+/g, '');
    expect(hex.length / 2).toBe(Number(m[2]));
    out.push({ direction: m[1], hex });
  }
  return out;
}

describe('QUTest 8.1.3 through the front-end port (a recorded run, 5 tests passed)', () => {
  it('sends qutest every datagram of the recording and writes the target every QS-RX frame', () => {
    const frames: string[] = [];
    const pending: Uint8Array[] = [];
    const sent: string[] = [];
    const link = new QsTargetLink({
      write: (frame) => {
        frames.push(Buffer.from(frame).toString('hex'));
        pending.push(frame);
      },
    });
    const frontEnd = new QspyFrontEnd({ target: link, send: (d) => sent.push(Buffer.from(d).toString('hex')) });
    const target = new RecordedTarget((bytes) => link.data(bytes), spec.options);
    link.targetConnected();
    target.start();
    const recorded = tap();
    for (const d of recorded.filter((e) => e.direction === 'FE->QSPY')) {
      frontEnd.datagram(Buffer.from(d.hex, 'hex'), QUTEST);
      // The target reads what was written after the front-end is done with the datagram.
      while (pending.length > 0) target.receive(pending.shift() as Uint8Array);
    }
    expect(sent).toEqual(recorded.filter((e) => e.direction === 'QSPY->FE').map((e) => e.hex));
    const written = readFileSync(new URL('target_qs_rx.txt', dir), 'latin1')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/^\s*[\d.]+ QSPY->TRG /, '').replace(/\s+/g, ''));
    expect(frames).toEqual(written);
    // The target info went to qutest in the QP 8.x layout it requires: 20 bytes.
    expect(sent.filter((h) => h.slice(2, 4) === '40').map((h) => h.length / 2)).toEqual([20, 20]);
  });

  it('was a run in which qutest 8.1.3 passed all five tests, in process and through the gateway', () => {
    for (const file of ['qutest_stdout.txt', 'gateway_qutest_stdout.txt']) {
      const out = readFileSync(new URL(file, dir), 'latin1');
      expect(out, file).toContain('QUTest trace-based testing front-end 8.1.3');
      expect(out, file).toContain('(QP-Ver=813)');
      expect(out, file).toMatch(/Tests {5}: 5\n/);
      expect(out, file).toMatch(/Failed {4}: 0\n/);
    }
  });

  it("sent qutest the same datagrams through a gateway's ?frontend= link as in process", () => {
    const fromPort = (file: string) =>
      tap(file)
        .filter((e) => e.direction === 'QSPY->FE')
        .map((e) => e.hex);
    expect(fromPort('gateway_udp_tap.txt')).toEqual(fromPort('qutest_udp_tap.txt'));
  });
});
