/**
 * The QS-RX commands the control panel offers, grouped as QView groups them, and how a form's
 * text becomes the api's command body. Values are passed on as typed: the api checks them
 * against the target's sizes and names the field at fault.
 */

/** Where the choices of a field come from. */
export type FieldKind =
  | 'number'
  | 'text'
  | 'list'
  | 'object'
  | 'signal'
  | 'function'
  | 'command'
  | 'objectKind'
  | 'itemSize'
  | 'eventTarget'
  | 'check';

export interface FieldSpec {
  /** The command body's property (also the name the api's 400 detail uses). */
  name: string;
  label: string;
  kind: FieldKind;
  value?: string;
  placeholder?: string;
  help?: string;
  optional?: boolean;
}

export interface CommandSpec {
  command: string;
  /** The button's text. */
  label: string;
  title: string;
  fields: FieldSpec[];
}

export interface CommandGroup {
  title: string;
  commands: CommandSpec[];
}

const offset: FieldSpec = { name: 'offset', label: 'Offset', kind: 'number', value: '0' };
const size: FieldSpec = { name: 'size', label: 'Item size', kind: 'itemSize', value: '1' };
const num: FieldSpec = { name: 'num', label: 'Items', kind: 'number', value: '1' };
const objectKind: FieldSpec = { name: 'kind', label: 'Kind', kind: 'objectKind', value: 'SM' };
const u32 = (name: string, label: string): FieldSpec => ({
  name,
  label,
  kind: 'number',
  optional: true,
  placeholder: '0',
});

/** A command of the panel: its name in the api's body, its button's text and tooltip, its fields. */
const command = (name: string, label: string, title: string, ...fields: FieldSpec[]): CommandSpec => ({
  command: name,
  label,
  title,
  fields,
});

export const COMMAND_GROUPS: CommandGroup[] = [
  {
    title: 'Target',
    commands: [
      command('reset', 'Reset', 'QS_RX_RESET: reset the target'),
      command('info', 'Target info', 'QS_RX_INFO: the target reports its target info'),
      command('tick', 'Tick', 'QS_RX_TICK: one clock tick', {
        name: 'rate',
        label: 'Tick rate',
        kind: 'number',
        value: '0',
      }),
    ],
  },
  {
    title: 'Filters',
    commands: [
      command('globalFilter', 'Global filter', 'QS_RX_GLB_FILTER: enable exactly these records', {
        name: 'records',
        label: 'Records',
        kind: 'list',
        value: 'ALL',
        help: 'record ids (0..127) and groups: ALL, SM, AO, QF, TE, EQ, MP, SC, SEM, MTX, U0..U4, UA; -SM removes',
      }),
      command('localFilter', 'Local filter', 'QS_RX_LOC_FILTER: enable exactly these QS-IDs', {
        name: 'qsIds',
        label: 'QS-IDs',
        kind: 'list',
        value: 'ALL',
        help: 'QS-IDs (0..127) and groups: ALL, AO, EP, EQ, AP; -AO removes',
      }),
      command(
        'aoFilter',
        'AO filter',
        "QS_RX_AO_FILTER: enable (or remove) an active object's QS-ID",
        { name: 'object', label: 'Active object', kind: 'object' },
        { name: 'remove', label: 'remove', kind: 'check', optional: true },
      ),
    ],
  },
  {
    title: 'Current object',
    commands: [
      command(
        'currentObject',
        'Set current',
        'QS_RX_CURR_OBJ: set the current object of a kind (an SM or AO also scopes signal names)',
        objectKind,
        { name: 'object', label: 'Object', kind: 'object' },
      ),
      command('queryCurrent', 'Query current', 'QS_RX_QUERY_CURR: the current object of a kind', objectKind),
    ],
  },
  {
    title: 'Events',
    commands: [
      command(
        'event',
        'Send event',
        'QS_RX_EVENT: publish, post, or dispatch to the current state machine',
        { name: 'prio', label: 'To', kind: 'eventTarget', value: '0' },
        { name: 'sig', label: 'Signal', kind: 'signal' },
        {
          name: 'params',
          label: 'Parameters',
          kind: 'list',
          optional: true,
          help: "the event's parameter bytes, e.g. 2, 0x10",
        },
      ),
      command(
        'command',
        'Command',
        "QS_RX_COMMAND: the application's QS_onCommand",
        { name: 'cmdId', label: 'Command', kind: 'command' },
        u32('p1', 'p1'),
        u32('p2', 'p2'),
        u32('p3', 'p3'),
      ),
    ],
  },
  {
    title: 'Memory of the current AP object',
    commands: [
      command('peek', 'Peek', 'QS_RX_PEEK: read items', offset, size, num),
      command('poke', 'Poke', 'QS_RX_POKE: write items', offset, size, {
        name: 'items',
        label: 'Items',
        kind: 'list',
        help: 'values, e.g. 1, 2, 0xFF',
      }),
      command('fill', 'Fill', 'QS_RX_FILL: fill items with one value', offset, size, num, {
        name: 'value',
        label: 'Value',
        kind: 'number',
        value: '0',
      }),
    ],
  },
  {
    title: 'Test',
    commands: [
      command('testSetup', 'Setup', 'QS_RX_TEST_SETUP'),
      command('testTeardown', 'Teardown', 'QS_RX_TEST_TEARDOWN'),
      command('testContinue', 'Continue', 'QS_RX_TEST_CONTINUE: the target leaves its paused state'),
      command(
        'testProbe',
        'Probe',
        'QS_RX_TEST_PROBE: a probe value for a function',
        { name: 'function', label: 'Function', kind: 'function' },
        u32('data', 'Data'),
      ),
    ],
  },
];

export const OBJECT_KINDS = ['SM', 'AO', 'MP', 'EQ', 'TE', 'AP', 'SM_AO'];

/** QS_RX_EVENT's priority byte: who gets the event. */
export const EVENT_TARGETS: Array<[value: string, label: string]> = [
  ['0', 'publish'],
  ['post', 'post to prio…'],
  ['253', 'current AO'],
  ['254', 'init current SM'],
  ['255', 'dispatch to current SM'],
];

/** A number as typed: decimal or 0x-hex; past 2^53 it stays text (the api takes 64-bit values as text). */
function numberOf(text: string): number | string {
  if (/^[0-9]{1,15}$/.test(text)) return Number(text);
  if (/^0x[0-9a-f]{1,13}$/i.test(text)) return Number.parseInt(text.slice(2), 16);
  return text;
}

/** A name or a number: only plain decimal becomes a number; names and 0x-hex go as text. */
function nameOrNumber(text: string): number | string {
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : text;
}

/** The command body from the form's values (`values[name]` as typed; `post` holds the priority to post to). */
export function commandBody(spec: CommandSpec, values: Record<string, string | boolean>): Record<string, unknown> {
  const body: Record<string, unknown> = { command: spec.command };
  for (const f of spec.fields) {
    const raw = values[f.name];
    if (f.kind === 'check') {
      if (raw === true) body[f.name] = true;
      continue;
    }
    const text = String(raw ?? '').trim();
    if (text === '' && f.optional) continue;
    switch (f.kind) {
      case 'list':
        body[f.name] = text
          .split(/[\s,]+/)
          .filter((t) => t !== '')
          .map((t) => (f.name === 'records' || f.name === 'qsIds' ? nameOrNumber(t) : numberOf(t)));
        break;
      case 'object':
      case 'signal':
      case 'function':
      case 'command':
        body[f.name] = nameOrNumber(text);
        break;
      case 'objectKind':
        body[f.name] = text;
        break;
      case 'eventTarget':
        body[f.name] = text === 'post' ? numberOf(String(values.post ?? '').trim()) : Number(text);
        break;
      default:
        body[f.name] = numberOf(text);
    }
  }
  return body;
}

/** One line that says what was sent: `peek offset=0 size=4 num=2`. */
export function commandSummary(body: Record<string, unknown>): string {
  const parts = Object.entries(body)
    .filter(([k]) => k !== 'command')
    .map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(', ')}]` : String(v)}`);
  return [String(body.command), ...parts].join(' ');
}

/** The api's validator phrases, as the end of a sentence about a field. */
function rephrase(message: string): string {
  const m = /^Expected integer to be (less|greater) or equal to (\d+)$/.exec(message);
  if (m) return m[1] === 'less' ? `must be at most ${m[2]}` : `must be at least ${m[2]}`;
  if (message === 'Expected integer' || message === 'Expected number') return 'must be a whole number';
  if (message === 'Expected union value') return 'must be a name or a number (decimal or 0x-hex)';
  if (message === 'Expected array') return 'must be a list of values';
  if (message === 'Unexpected property') return 'is not a field of this command';
  if (/^Expected required property/.test(message)) return 'is required';
  if (/^Expected string length greater or equal/.test(message)) return 'is required';
  if (/^Expected array length greater or equal to 1/.test(message)) return 'needs at least one value';
  return message;
}

/**
 * The field a 400's detail is about and one sentence for it: `body command.items[1]: 70000
 * is out of range: 0..255` -> `items`, `Items (2nd): 70000 is out of range: 0..255.`
 */
export function fieldProblem(spec: CommandSpec, detail: string): { field: string | null; sentence: string } {
  const m = /^body command\.(\w+)(?:\[(\d+)\])?: (.*)$/.exec(detail);
  const tidy = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).replace(/\.?$/, '.');
  if (!m) return { field: null, sentence: tidy(detail.replace(/^body (command\.?)?\w*:?\s*/, '')) };
  const field = spec.fields.find((f) => f.name === m[1]);
  const label = `${field?.label ?? m[1]}${m[2] === undefined ? '' : ` (item ${Number(m[2]) + 1})`}`;
  const message = rephrase(m[3]);
  return {
    field: field ? field.name : null,
    sentence: /^(must|is|needs) /.test(message) ? `${label} ${message}.` : `${label}: ${tidy(message)}`,
  };
}
