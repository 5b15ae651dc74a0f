import { QsPayloadWriter, QsRxId, type QsTargetConfig } from '@tracehub/qs';
import { QS_CMD_ENUM_GROUP } from './name-index.js';
import { CMD_ENUM_FROM_VERSION } from './protocol.js';
import type { QsTargetLink } from './target-link.js';

/** A number, or its decimal or 0x-hex text (addresses and 64-bit values do not fit a JSON number). */
export type NumberText = number | string;

/**
 * A QS-RX command as tracehub's control API takes it: every command of QS-RX, objects,
 * functions, signals and commands by dictionary name or by number, filters by record-group
 * name or number. The link's gateway lays it out with the target's own sizes.
 */
export type QsCommand =
  | { command: 'info' }
  | { command: 'reset' }
  | { command: 'tick'; rate?: number }
  | { command: 'command'; cmdId: NumberText; p1?: NumberText; p2?: NumberText; p3?: NumberText }
  | { command: 'event'; prio: number; sig: NumberText; params?: number[] }
  | { command: 'peek'; offset: number; size: number; num: number }
  | { command: 'poke'; offset: number; size: number; items: NumberText[] }
  | { command: 'fill'; offset: number; size: number; num: number; value: NumberText }
  | { command: 'globalFilter'; records: (number | string)[] }
  | { command: 'localFilter'; qsIds: (number | string)[] }
  | { command: 'aoFilter'; object: NumberText; remove?: boolean }
  | { command: 'currentObject'; kind: number | string; object: NumberText }
  | { command: 'queryCurrent'; kind: number | string }
  | { command: 'testSetup' }
  | { command: 'testTeardown' }
  | { command: 'testContinue' }
  | { command: 'testProbe'; function: NumberText; data?: NumberText };

/**
 * A command as a request carries it (the control API's body, a control message on NATS):
 * `command` names it and the other properties are its fields, their values not yet checked.
 * `buildCommand` checks each value against its field as it lays the command out.
 */
export interface QsCommandRequest {
  command: string;
  [field: string]: unknown;
}

export const QS_COMMAND_NAMES = [
  'info',
  'reset',
  'tick',
  'command',
  'event',
  'peek',
  'poke',
  'fill',
  'globalFilter',
  'localFilter',
  'aoFilter',
  'currentObject',
  'queryCurrent',
  'testSetup',
  'testTeardown',
  'testContinue',
  'testProbe',
] as const;

/** Object kinds of QS_RX_CURR_OBJ / QS_RX_QUERY_CURR, by name. */
export const OBJECT_KINDS: Readonly<Record<string, number>> = { SM: 0, AO: 1, MP: 2, EQ: 3, TE: 4, AP: 5, SM_AO: 6 };

/**
 * The target's global-filter groups (QS_ALL_RECORDS, QS_SM_RECORDS, ...), the masks qutest.py
 * and QView send: bit n enables record n (front-end spec, Appendix A).
 */
export const RECORD_GROUP_MASKS: Readonly<Record<string, bigint>> = {
  ALL: 0x1fffffffffffffffffffffffffffffffn,
  SM: 0x000000000000000003800000000003fen,
  AO: 0x0000000000000000000020000007fc00n,
  MP: 0x00000000000000000000800003000000n,
  EQ: 0x00000000000000000000400000780000n,
  TE: 0x00000000000000000000003f00000000n,
  QF: 0x000000000000000000001fc0fc800000n,
  SC: 0x0000000000000000003f000000000000n,
  SEM: 0x00000000000007800000000000000000n,
  MTX: 0x000000000001f8000000000000000000n,
  U0: 0x000001f0000000000000000000000000n,
  U1: 0x00003e00000000000000000000000000n,
  U2: 0x0007c000000000000000000000000000n,
  U3: 0x00f80000000000000000000000000000n,
  U4: 0x1f000000000000000000000000000000n,
  UA: 0x1ffffff0000000000000000000000000n,
};

/** QS-ID groups of the local filter (qutest.py's IDS_*). */
export const QS_ID_GROUP_MASKS: Readonly<Record<string, bigint>> = {
  ALL: (1n << 128n) - 1n,
  AO: 0x0000000000000001fffffffffffffffen,
  EP: 0x000000000000fffe0000000000000000n,
  EQ: 0x00000000ffff00000000000000000000n,
  AP: 0xffffffff000000000000000000000000n,
};

/** A bad field of a command: which one, and what it may be. */
export class CommandFieldError extends Error {
  override name = 'CommandFieldError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** Sizes to lay a command out with when the gateway has not seen the target's info on this connection. */
export interface CommandSizes {
  objPtrSize: number;
  funPtrSize: number;
  sigSize: number;
}

/** What a command became: the QS-RX body `[id, payload...]` and how names were resolved. */
export interface BuiltCommand {
  body: Uint8Array;
  /** Names looked up in the link's dictionaries, and their values. */
  resolved: Record<string, string>;
  /** Set by a by-name current object of kind SM/AO/SM_AO: it scopes signal names, as in qspy. */
  scope?: bigint;
}

/**
 * Lays a command out as a QS-RX body, checking every value against the field's width and the
 * target's sizes (its latest target info, else `fallback`, else qspy's defaults), and resolving
 * names through the link's dictionaries. Throws `CommandFieldError` naming the field. With
 * `resolveNames: false` names are taken as valid (0): a check of the values alone, for callers
 * away from the link (the API, before it asks the gateway).
 */
export function buildCommand(
  request: QsCommand | QsCommandRequest,
  link: QsTargetLink,
  fallback?: Partial<CommandSizes>,
  { resolveNames = true }: { resolveNames?: boolean } = {},
): BuiltCommand {
  const config: QsTargetConfig & { fromTarget: boolean } = link.config;
  const sizes: CommandSizes = config.fromTarget
    ? config
    : {
        objPtrSize: fallback?.objPtrSize ?? config.objPtrSize,
        funPtrSize: fallback?.funPtrSize ?? config.funPtrSize,
        sigSize: fallback?.sigSize ?? config.sigSize,
      };
  // Read as the command its name says; every value is checked below as it is read.
  const c = request as QsCommand;
  const out = new QsPayloadWriter();
  const resolved: Record<string, string> = {};
  const f = (name: string) => `command.${name}`;
  switch (c.command) {
    case 'info':
      return { body: out.u8(QsRxId.QS_RX_INFO).toBytes(), resolved };
    case 'reset':
      return { body: out.u8(QsRxId.QS_RX_RESET).toBytes(), resolved };
    case 'tick':
      return {
        body: out
          .u8(QsRxId.QS_RX_TICK)
          .uint(intIn(f('rate'), c.rate ?? 0, 1), 1)
          .toBytes(),
        resolved,
      };
    case 'testSetup':
      return { body: out.u8(QsRxId.QS_RX_TEST_SETUP).toBytes(), resolved };
    case 'testTeardown':
      return { body: out.u8(QsRxId.QS_RX_TEST_TEARDOWN).toBytes(), resolved };
    case 'testContinue':
      return { body: out.u8(QsRxId.QS_RX_TEST_CONTINUE).toBytes(), resolved };
    case 'command': {
      let cmd: bigint;
      if (typeof c.cmdId === 'string' && !isNumberText(c.cmdId)) {
        const byEnum = config.version >= CMD_ENUM_FROM_VERSION;
        const value = !resolveNames
          ? 0
          : byEnum
            ? link.names.enumValue(QS_CMD_ENUM_GROUP, c.cmdId)
            : link.names.userRecord(c.cmdId);
        if (value === undefined) {
          throw new CommandFieldError(
            f('cmdId'),
            `no command named '${c.cmdId}' in the link's ${byEnum ? 'QS_CMD enumeration' : 'user-record dictionary'} (give its number, 0..255)`,
          );
        }
        resolved[c.cmdId] = String(value);
        cmd = BigInt(value);
      } else cmd = intIn(f('cmdId'), c.cmdId, 1);
      out.u8(QsRxId.QS_RX_COMMAND).uint(cmd, 1);
      for (const p of ['p1', 'p2', 'p3'] as const) out.uint(intIn(f(p), c[p] ?? 0, 4), 4);
      return { body: out.toBytes(), resolved };
    }
    case 'event': {
      const prio = intIn(f('prio'), c.prio, 1);
      let sig: bigint;
      if (typeof c.sig === 'string' && !isNumberText(c.sig)) {
        const value = resolveNames ? link.names.signal(c.sig, link.scope) : 0;
        if (value === undefined) {
          throw new CommandFieldError(
            f('sig'),
            `no signal named '${c.sig}' in the link's dictionaries${link.scope === null ? '' : ' (global, or of the current state machine)'}; give its number, 0..${maxOf(sizes.sigSize)}`,
          );
        }
        resolved[c.sig] = String(value);
        sig = BigInt(value);
      } else sig = intIn(f('sig'), c.sig, sizes.sigSize, 'signals');
      const params = c.params ?? [];
      if (params.length > 0xffff) throw new CommandFieldError(f('params'), 'at most 65535 bytes');
      for (const [i, p] of params.entries()) intIn(`${f('params')}[${i}]`, p, 1);
      return {
        body: out
          .u8(QsRxId.QS_RX_EVENT)
          .uint(prio, 1)
          .uint(sig, sizes.sigSize)
          .u16(params.length)
          .raw(params)
          .toBytes(),
        resolved,
      };
    }
    case 'peek': {
      const size = itemSize(f('size'), c.size);
      return {
        body: out
          .u8(QsRxId.QS_RX_PEEK)
          .uint(intIn(f('offset'), c.offset, 2), 2)
          .u8(size)
          .uint(intIn(f('num'), c.num, 1), 1)
          .toBytes(),
        resolved,
      };
    }
    case 'poke': {
      const size = itemSize(f('size'), c.size);
      if (!Array.isArray(c.items) || c.items.length < 1 || c.items.length > 255) {
        throw new CommandFieldError(f('items'), 'between 1 and 255 items');
      }
      out
        .u8(QsRxId.QS_RX_POKE)
        .uint(intIn(f('offset'), c.offset, 2), 2)
        .u8(size)
        .u8(c.items.length);
      for (const [i, v] of c.items.entries()) out.uint(intIn(`${f('items')}[${i}]`, v, size, 'items'), size);
      return { body: out.toBytes(), resolved };
    }
    case 'fill': {
      const size = itemSize(f('size'), c.size);
      const num = intIn(f('num'), c.num, 1);
      return {
        body: out
          .u8(QsRxId.QS_RX_FILL)
          .uint(intIn(f('offset'), c.offset, 2), 2)
          .u8(size)
          .uint(num, 1)
          .uint(intIn(f('value'), c.value, size, 'items'), size)
          .toBytes(),
        resolved,
      };
    }
    case 'globalFilter': {
      const mask = filterMask(f('records'), c.records, RECORD_GROUP_MASKS);
      return { body: out.u8(QsRxId.QS_RX_GLB_FILTER).u8(16).uint(mask, 16).toBytes(), resolved };
    }
    case 'localFilter': {
      const mask = filterMask(f('qsIds'), c.qsIds, QS_ID_GROUP_MASKS);
      return { body: out.u8(QsRxId.QS_RX_LOC_FILTER).u8(16).uint(mask, 16).toBytes(), resolved };
    }
    case 'aoFilter': {
      const object = objectAddress(f('object'), c.object, link, sizes.objPtrSize, resolved, resolveNames);
      const byName = typeof c.object === 'string' && !isNumberText(c.object);
      if (object === 0n && !byName)
        throw new CommandFieldError(f('object'), 'the AO filter needs an active object, not address 0');
      return {
        body: out
          .u8(QsRxId.QS_RX_AO_FILTER)
          .u8(c.remove ? 1 : 0)
          .uint(object, sizes.objPtrSize)
          .toBytes(),
        resolved,
      };
    }
    case 'currentObject': {
      const kind = objectKind(f('kind'), c.kind);
      const object = objectAddress(f('object'), c.object, link, sizes.objPtrSize, resolved, resolveNames);
      const byName = typeof c.object === 'string' && !isNumberText(c.object);
      const scopes = byName && (kind === 0 || kind === 1 || kind === 6);
      return {
        body: out.u8(QsRxId.QS_RX_CURR_OBJ).u8(kind).uint(object, sizes.objPtrSize).toBytes(),
        resolved,
        ...(scopes ? { scope: object } : {}),
      };
    }
    case 'queryCurrent': {
      const kind = objectKind(f('kind'), c.kind);
      if (kind > 5) throw new CommandFieldError(f('kind'), 'SM, AO, MP, EQ, TE or AP (0..5)');
      return { body: out.u8(QsRxId.QS_RX_QUERY_CURR).u8(kind).toBytes(), resolved };
    }
    case 'testProbe': {
      let fun: bigint;
      if (typeof c.function === 'string' && !isNumberText(c.function)) {
        const value = resolveNames ? link.names.function(c.function) : 0n;
        if (value === undefined) {
          throw new CommandFieldError(f('function'), `no function named '${c.function}' in the link's dictionaries`);
        }
        resolved[c.function] = hexOf(value);
        fun = value;
      } else fun = intIn(f('function'), c.function, sizes.funPtrSize, 'function pointers');
      return {
        body: out
          .u8(QsRxId.QS_RX_TEST_PROBE)
          .uint(intIn(f('data'), c.data ?? 0, 4), 4)
          .uint(fun, sizes.funPtrSize)
          .toBytes(),
        resolved,
      };
    }
    default:
      throw new CommandFieldError('command.command', `one of ${QS_COMMAND_NAMES.join(', ')}`);
  }
}

function isNumberText(s: string): boolean {
  return /^(0x[0-9a-fA-F]+|[0-9]+)$/.test(s);
}

function maxOf(bytes: number): string {
  const max = (1n << BigInt(bytes * 8)) - 1n;
  return bytes >= 4 ? `0x${max.toString(16).toUpperCase()}` : max.toString();
}

function hexOf(v: bigint): string {
  return `0x${v.toString(16).toUpperCase()}`;
}

/**
 * An unsigned value that must fit `bytes` bytes: a safe JS integer or its decimal/0x-hex text.
 * `what` names the target's size the width comes from, when it does.
 */
function intIn(field: string, value: unknown, bytes: number, what?: string): bigint {
  const range = `0..${maxOf(bytes)}`;
  const width = what ? ` (the target's ${what} are ${bytes} byte${bytes === 1 ? '' : 's'})` : ` (${bytes * 8} bits)`;
  let v: bigint;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new CommandFieldError(field, `must be an integer in ${range}${width}`);
    v = BigInt(value);
  } else if (typeof value === 'string' && isNumberText(value) && value.length <= 40) {
    v = BigInt(value);
  } else {
    throw new CommandFieldError(field, `must be an integer (or its decimal or 0x-hex text) in ${range}${width}`);
  }
  if (v < 0n || v >= 1n << BigInt(bytes * 8))
    throw new CommandFieldError(field, `${value} is out of range: ${range}${width}`);
  return v;
}

function itemSize(field: string, size: unknown): 1 | 2 | 4 {
  if (size === 1 || size === 2 || size === 4) return size;
  throw new CommandFieldError(field, `must be 1, 2 or 4 (bytes per item), not ${JSON.stringify(size)}`);
}

function objectKind(field: string, kind: unknown): number {
  if (typeof kind === 'string' && kind in OBJECT_KINDS) return OBJECT_KINDS[kind];
  if (typeof kind === 'number' && Number.isInteger(kind) && kind >= 0 && kind <= 6) return kind;
  throw new CommandFieldError(field, `one of ${Object.keys(OBJECT_KINDS).join(', ')} (or 0..6)`);
}

function objectAddress(
  field: string,
  object: unknown,
  link: QsTargetLink,
  size: number,
  resolved: Record<string, string>,
  resolveNames: boolean,
): bigint {
  if (typeof object === 'string' && !isNumberText(object)) {
    const address = resolveNames ? link.names.object(object) : 0n;
    if (address === undefined) {
      throw new CommandFieldError(field, `no object named '${object}' in the link's dictionaries (give its address)`);
    }
    resolved[object] = hexOf(address);
    return address;
  }
  return intIn(field, object, size, 'object pointers');
}

/** A 128-bit filter: record ids / QS-IDs and group names; a leading '-' removes. */
function filterMask(field: string, items: unknown, groups: Readonly<Record<string, bigint>>): bigint {
  if (!Array.isArray(items) || items.length > 256)
    throw new CommandFieldError(field, 'a list of at most 256 ids or group names');
  let mask = 0n;
  items.forEach((item, i) => {
    const at = `${field}[${i}]`;
    let remove = false;
    let bits: bigint;
    if (typeof item === 'number') {
      if (!Number.isInteger(item) || item < 0 || item > 127) throw new CommandFieldError(at, 'an id must be 0..127');
      bits = 1n << BigInt(item);
    } else if (typeof item === 'string') {
      remove = item.startsWith('-');
      const name = (remove ? item.slice(1) : item).replace(/^(GRP_|IDS_|QS_)/, '').toUpperCase();
      const group = groups[name];
      if (group === undefined) {
        throw new CommandFieldError(
          at,
          `'${item}' is not a group: one of ${Object.keys(groups).join(', ')} (a leading '-' removes it)`,
        );
      }
      bits = group;
    } else throw new CommandFieldError(at, 'an id (0..127) or a group name');
    mask = remove ? mask & ~bits : mask | bits;
  });
  return mask & ((1n << 128n) - 1n);
}
