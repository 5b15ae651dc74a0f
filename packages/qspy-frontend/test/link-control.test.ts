// tracehub's own commands through the link's control point, answered by a scripted target
// from its decoded records: acks, dones, data, target errors, bad fields.
import { QsRxId } from '@tracehub/qs';
import { until } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { QsLinkControl } from '../src/link-control.js';
import { ScriptedTarget } from '../src/scripted-target.js';
import { QsTargetLink } from '../src/target-link.js';

function rig(options: { objPtrSize?: number } = {}) {
  let trg: ScriptedTarget;
  /** While `frames` is set, frames are written but the target never reads them; while `held`, it reads them on `release()`. */
  const lost = { frames: false };
  const hold: { frames: Uint8Array[] | null; release(): void } = {
    frames: null,
    release: () => {
      const frames = hold.frames ?? [];
      hold.frames = null;
      for (const f of frames) trg.receive(f);
    },
  };
  const link = new QsTargetLink({
    write: (frame) => {
      if (hold.frames) hold.frames.push(frame);
      else if (!lost.frames) queueMicrotask(() => trg.receive(frame));
    },
  });
  trg = new ScriptedTarget((bytes) => link.data(bytes), options);
  link.targetConnected();
  trg.start({
    objects: [
      [0x2000n, 'ao_B'],
      [0x3000n, 'table'],
    ],
    signals: [
      [7, 0n, 'GLOBAL_SIG'],
      [6, 0x2000n, 'LOCAL_SIG'],
    ],
    commands: [[3, 'MY_CMD']],
  });
  return { link, trg, lost, hold, control: new QsLinkControl(link) };
}

const opts = { timeoutMs: 300 };

describe('QsLinkControl', () => {
  it('returns the target answer matched to each command: data, ack, done, error', async () => {
    const { control, trg } = rig();
    const info = await control.execute({ command: 'info' }, opts);
    expect(info).toMatchObject({ ok: true, outcome: 'data', rxSeq: 1, frame: '0100fe7e' });
    expect(info.answer?.name).toBe('QS_TARGET_INFO');

    const tick = await control.execute({ command: 'tick' }, opts);
    expect(tick).toMatchObject({ ok: true, outcome: 'done', rxSeq: 2 });
    expect(tick.text).toEqual([
      '           Trg-Ack  QS_RX_TICK',
      '0000000000 USER+000 3',
      '0000000001 Trg-Done QS_RX_TICK',
    ]);

    const filter = await control.execute({ command: 'aoFilter', object: 'ao_B' }, opts);
    expect(filter).toMatchObject({ ok: true, outcome: 'ack', resolved: { ao_B: '0x2000' } });
    expect(filter.answer?.text).toBe('           Trg-Ack  QS_RX_AO_FILTER');

    await control.execute({ command: 'currentObject', kind: 'AP', object: 'table' }, opts);
    const peek = await control.execute({ command: 'peek', offset: 16, size: 2, num: 2 }, opts);
    expect(peek).toMatchObject({ ok: true, outcome: 'data' });
    expect(peek.answer?.fields).toMatchObject({ offset: 16, size: 2, num: 2, data: [0x1110, 0x1312] });

    const fill = await control.execute({ command: 'aoFilter', object: '0x0000' }, opts).catch((e) => e);
    expect(fill.message).toMatch(/command.object: .*not address 0/);
    expect(trg.received.map((f) => f.id)).toEqual([0, 3, 12, 13, 4]);
  });

  it('only skims the link while no command waits, keeping its names and target info, and decodes all while one does', async () => {
    const { link, trg, control } = rig();
    const seen: string[] = [];
    link.onRecord(
      // Frame errors and gaps are reported in a skim too.
      (record) => record.kind !== 'error' && seen.push(record.name),
      () => false,
    );
    // Records nobody waits for are not decoded: the listener gets none of them.
    trg.user(0, new Uint8Array([1, 2, 3]));
    trg.start({ objects: [[0x4000n, 'ao_C']], signals: [], commands: [] });
    // Kept back until something about the link is asked: then skimmed.
    expect(seen).toEqual([]);
    expect(link.names.object('ao_C')).toBe(0x4000n);
    expect(link.config.fromTarget).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((name) => !name.endsWith('_DICT') && name !== 'QS_TARGET_INFO' && name !== 'QS_EMPTY')).toEqual(
      [],
    );
    // While a command waits for its answer, every record is decoded.
    seen.length = 0;
    const tick = await control.execute({ command: 'tick' }, opts);
    expect(tick).toMatchObject({ ok: true, outcome: 'done' });
    expect(seen).toContain('QS_RX_STATUS');
  });

  it('a Trg-ERR is not ok: a peek with no current AP object', async () => {
    const { control } = rig();
    const err = await control.execute({ command: 'peek', offset: 0, size: 1, num: 4 }, opts);
    expect(err).toMatchObject({
      ok: false,
      outcome: 'error',
      error: 'the target refused it: Trg-ERR  QS_RX_PEEK',
      answer: { name: 'QS_RX_STATUS', text: '           Trg-ERR  QS_RX_PEEK', fields: { ack: false, error: 4 } },
    });
    const query = await control.execute({ command: 'queryCurrent', kind: 'SM' }, opts);
    expect(query).toMatchObject({ ok: true, outcome: 'data' });
    expect(query.answer?.text).toMatch(/Query-SM Obj=/);
  });

  it('resolves signals and commands by name, scopes signals by a by-name current object', async () => {
    const { control, trg } = rig();
    await expect(control.execute({ command: 'event', prio: 255, sig: 'LOCAL_SIG' }, opts)).rejects.toMatchObject({
      field: 'command.sig',
    });
    await control.execute({ command: 'currentObject', kind: 'SM', object: 'ao_B' }, opts);
    const ev = await control.execute({ command: 'event', prio: 255, sig: 'LOCAL_SIG', params: [1, 2] }, opts);
    expect(ev).toMatchObject({ ok: true, outcome: 'done', resolved: { LOCAL_SIG: '6' } });
    const cmd = await control.execute({ command: 'command', cmdId: 'MY_CMD', p1: '0xFFFFFFFF' }, opts);
    expect(cmd).toMatchObject({ ok: true, outcome: 'done', resolved: { MY_CMD: '3' } });
    expect(trg.received.slice(-2).map((f) => f.payload)).toEqual([
      [255, 6, 0, 2, 0, 1, 2],
      [3, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0],
    ]);
  });

  it('validates values against the target sizes and the field widths, naming the field and the range', async () => {
    const { control, trg } = rig({ objPtrSize: 4 });
    const bad = async (command: object) => {
      const e = await control.execute(command as never, opts).catch((x) => x);
      return `${e.field} | ${e.message}`;
    };
    expect(await bad({ command: 'currentObject', kind: 'SM', object: '0x1122334455667788' })).toBe(
      "command.object | command.object: 0x1122334455667788 is out of range: 0..0xFFFFFFFF (the target's object pointers are 4 bytes)",
    );
    expect(await bad({ command: 'command', cmdId: 1, p1: '99999999999999999999' })).toBe(
      'command.p1 | command.p1: 99999999999999999999 is out of range: 0..0xFFFFFFFF (32 bits)',
    );
    expect(await bad({ command: 'poke', offset: 0, size: 1, items: [511, 70000] })).toBe(
      "command.items[0] | command.items[0]: 511 is out of range: 0..255 (the target's items are 1 byte)",
    );
    expect(await bad({ command: 'fill', offset: 0, size: 2, num: 1, value: 4294967295 })).toBe(
      "command.value | command.value: 4294967295 is out of range: 0..65535 (the target's items are 2 bytes)",
    );
    expect(await bad({ command: 'peek', offset: 0, size: 3, num: 1 })).toBe(
      'command.size | command.size: must be 1, 2 or 4 (bytes per item), not 3',
    );
    expect(await bad({ command: 'globalFilter', records: ['SM', 'NOPE'] })).toMatch(
      /^command.records\[1\] \| .*'NOPE' is not a group/,
    );
    expect(trg.received).toEqual([]);
  });

  it('filters by group names, ids and removals, as qutest lays them out', async () => {
    const { control, trg } = rig();
    await control.execute({ command: 'globalFilter', records: ['ALL', '-SM', 100] }, opts);
    await control.execute({ command: 'localFilter', qsIds: ['IDS_AO'] }, opts);
    const [glb, loc] = trg.received;
    const mask = (0x1fffffffffffffffffffffffffffffffn & ~0x000000000000000003800000000003fen) | (1n << 100n);
    expect(glb.payload).toEqual([16, ...Array.from({ length: 16 }, (_, i) => Number((mask >> BigInt(8 * i)) & 0xffn))]);
    expect(loc.payload[1]).toBe(0xfe);
  });

  it('times out when the target does not answer, and says the target is gone when it is', async () => {
    const link = new QsTargetLink({ write: () => {} });
    const control = new QsLinkControl(link);
    await expect(control.execute({ command: 'tick' }, opts)).rejects.toThrow('the target is not connected');
    link.targetConnected();
    const res = await control.execute({ command: 'tick' }, { timeoutMs: 50 });
    expect(res).toMatchObject({ ok: false, outcome: 'timeout', error: 'the target did not answer within 50 ms' });
    const reset = await control.execute({ command: 'reset' }, { timeoutMs: 50 });
    expect(reset).toMatchObject({ ok: true, outcome: 'none' });
  });

  it("answers each command with its own answer when another sender's frame went first", async () => {
    const { link, hold, control } = rig();
    await control.execute({ command: 'currentObject', kind: 'AP', object: 'table' }, opts);
    // The target reads a front-end's peek of 3-byte items (Trg-ERR) and tracehub's good peek together.
    hold.frames = [];
    link.send(Uint8Array.of(QsRxId.QS_RX_PEEK, 0, 0, 3, 1));
    const peek = control.execute({ command: 'peek', offset: 0, size: 4, num: 1 }, opts);
    await new Promise((r) => setTimeout(r, 0));
    hold.release();
    expect(await peek).toMatchObject({ ok: true, outcome: 'data', answer: { name: 'QS_PEEK_DATA' } });
    expect((await peek).text[0]).toBe('           Trg-ERR  QS_RX_PEEK');
    // The same for a tick: the first Trg-Done is the front-end's.
    hold.frames = [];
    link.send(Uint8Array.of(QsRxId.QS_RX_TICK, 0));
    const tick = control.execute({ command: 'tick' }, opts);
    await new Promise((r) => setTimeout(r, 0));
    hold.release();
    const done = await tick;
    expect(done).toMatchObject({ ok: true, outcome: 'done' });
    expect(done.text.filter((l) => l.includes('Trg-Done'))).toHaveLength(2);
    expect(done.answer?.text).toBe(done.text.at(-1));
  });

  it("does not wait for another sender's frame the target never answered; a reset ends every wait", async () => {
    const { link, lost, hold, trg, control } = rig();
    lost.frames = true;
    link.send(Uint8Array.of(QsRxId.QS_RX_QUERY_CURR, 0));
    lost.frames = false;
    const tick = await control.execute({ command: 'tick' }, opts);
    expect(tick).toMatchObject({ ok: true, outcome: 'done' });
    // The target restarts before it reads the next command: that command gets no answer, at
    // once (the reset's own reason, not the 2 s timeout's).
    hold.frames = [];
    const waiting = control.execute({ command: 'tick' }, { timeoutMs: 2000 });
    await until('the command written to the link', () => hold.frames?.length === 1);
    hold.frames = null;
    trg.start();
    expect(await waiting).toMatchObject({ ok: false, outcome: 'timeout', error: 'no answer: the target reset' });
  });
});
