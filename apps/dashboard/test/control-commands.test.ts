// How the control panel's forms become the api's command bodies, and how a 400's detail
// becomes one sentence about one field.
import { describe, expect, it } from 'vitest';
import {
  COMMAND_GROUPS,
  type CommandSpec,
  commandBody,
  commandSummary,
  fieldProblem,
} from '../src/control-commands.js';

const spec = (command: string): CommandSpec => {
  const found = COMMAND_GROUPS.flatMap((g) => g.commands).find((c) => c.command === command);
  if (!found) throw new Error(command);
  return found;
};

describe('control panel commands', () => {
  it('offers every QS-RX command the api takes', () => {
    expect(COMMAND_GROUPS.flatMap((g) => g.commands.map((c) => c.command)).sort()).toEqual(
      [
        'aoFilter',
        'command',
        'currentObject',
        'event',
        'fill',
        'globalFilter',
        'info',
        'localFilter',
        'peek',
        'poke',
        'queryCurrent',
        'reset',
        'testContinue',
        'testProbe',
        'testSetup',
        'testTeardown',
        'tick',
      ].sort(),
    );
  });

  it('passes numbers as numbers, names and 64-bit hex as text, lists split on commas or spaces', () => {
    expect(commandBody(spec('poke'), { offset: '0x10', size: '2', items: '1, 0xFFFF 3' })).toEqual({
      command: 'poke',
      offset: 16,
      size: 2,
      items: [1, 0xffff, 3],
    });
    expect(commandBody(spec('globalFilter'), { records: 'SM, -AO 100' })).toEqual({
      command: 'globalFilter',
      records: ['SM', '-AO', 100],
    });
    expect(commandBody(spec('currentObject'), { kind: 'AP', object: '0x20001000' })).toEqual({
      command: 'currentObject',
      kind: 'AP',
      object: '0x20001000',
    });
    expect(commandBody(spec('command'), { cmdId: 'MY_CMD', p1: '99999999999999999999', p2: '', p3: '' })).toEqual({
      command: 'command',
      cmdId: 'MY_CMD',
      p1: '99999999999999999999',
    });
    expect(commandBody(spec('aoFilter'), { object: 'l_philo', remove: true })).toEqual({
      command: 'aoFilter',
      object: 'l_philo',
      remove: true,
    });
    // Text that is not a number goes as typed: the api names the field and what it takes.
    expect(commandBody(spec('tick'), { rate: 'fast' })).toEqual({ command: 'tick', rate: 'fast' });
  });

  it('sends an event to the priority chosen, or to the one typed for a post', () => {
    expect(commandBody(spec('event'), { prio: 'post', post: '3', sig: 'EAT_SIG', params: '' })).toEqual({
      command: 'event',
      prio: 3,
      sig: 'EAT_SIG',
    });
    expect(commandBody(spec('event'), { prio: '255', post: '', sig: '7', params: '1 2' })).toEqual({
      command: 'event',
      prio: 255,
      sig: 7,
      params: [1, 2],
    });
    expect(commandSummary({ command: 'event', prio: 255, sig: 7, params: [1, 2] })).toBe(
      'event prio=255 sig=7 params=[1, 2]',
    );
  });

  it("says a 400's problem as one sentence about the field", () => {
    const peek = spec('peek');
    expect(fieldProblem(peek, 'body command.offset: Expected integer to be less or equal to 65535')).toEqual({
      field: 'offset',
      sentence: 'Offset must be at most 65535.',
    });
    expect(fieldProblem(peek, 'body command.size: must be 1, 2 or 4 (bytes per item), not 3')).toEqual({
      field: 'size',
      sentence: 'Item size must be 1, 2 or 4 (bytes per item), not 3.',
    });
    expect(fieldProblem(peek, 'body command.num: Expected integer')).toEqual({
      field: 'num',
      sentence: 'Items must be a whole number.',
    });
    expect(
      fieldProblem(spec('poke'), "body command.items[0]: 511 is out of range: 0..255 (the target's items are 1 byte)"),
    ).toEqual({
      field: 'items',
      sentence: "Items (item 1): 511 is out of range: 0..255 (the target's items are 1 byte).",
    });
    expect(fieldProblem(peek, 'the target is not connected')).toEqual({
      field: null,
      sentence: 'The target is not connected.',
    });
  });
});
