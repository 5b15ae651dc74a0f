import type { DecodedRecord } from '@tracehub/contracts';
import { QsRecordId } from '@tracehub/qs';

/** Enumeration group that holds the QS_CMD (command) names. */
export const QS_CMD_ENUM_GROUP = 7;

/** The user record QUTest targets post from `QS_onTestPost`, known to qspy without a dictionary. */
export const QUTEST_ON_POST = { rec: 124, name: 'QUTEST_ON_POST' } as const;

interface SignalEntry {
  sig: number;
  obj: bigint;
  name: string;
}

/**
 * The link's dictionaries read backwards: name -> value, the way qspy looks names up for
 * front-end commands (front-end spec 8). Fed with the decoded dictionary records of the link,
 * so the codec stays the only parser of the record layouts.
 *
 * Every lookup takes the first entry in ascending key order (qspy keeps its dictionaries as
 * sorted arrays); a later entry with the same key replaces the name.
 */
export class NameIndex {
  private readonly objects = new Map<bigint, string>();
  private readonly functions = new Map<bigint, string>();
  private readonly userRecords = new Map<number, string>();
  private readonly enums: Map<number, string>[] = Array.from({ length: 8 }, () => new Map());
  private readonly signals: SignalEntry[] = [];

  constructor() {
    this.userRecords.set(QUTEST_ON_POST.rec, QUTEST_ON_POST.name);
  }

  /** Takes in a dictionary record (anything else is ignored). */
  add(record: DecodedRecord): void {
    if (record.kind !== 'dict') return;
    const f = record.fields;
    const name = typeof f.name === 'string' ? f.name : undefined;
    if (name === undefined) return;
    switch (record.type) {
      case QsRecordId.QS_OBJ_DICT:
        if (typeof f.obj === 'string') this.objects.set(BigInt(f.obj), name);
        return;
      case QsRecordId.QS_FUN_DICT:
        if (typeof f.fun === 'string') this.functions.set(BigInt(f.fun), name);
        return;
      case QsRecordId.QS_USR_DICT:
        if (typeof f.recId === 'number') this.userRecords.set(f.recId, name);
        return;
      case QsRecordId.QS_ENUM_DICT:
        if (typeof f.value === 'number' && typeof f.group === 'number') this.enums[f.group & 7].set(f.value, name);
        return;
      case QsRecordId.QS_SIG_DICT:
        if (typeof f.sig === 'number' && typeof f.obj === 'string') this.addSignal(f.sig, BigInt(f.obj), name);
        return;
    }
  }

  private addSignal(sig: number, obj: bigint, name: string): void {
    const same = this.signals.find((e) => e.sig === sig && e.obj === obj);
    if (same) {
      same.name = name;
      return;
    }
    this.signals.push({ sig, obj, name });
    this.signals.sort((a, b) => a.sig - b.sig || (a.obj < b.obj ? -1 : a.obj > b.obj ? 1 : 0));
  }

  /**
   * Empties the signal, object, function and user dictionaries (a target reset or a changed
   * configuration). The enumerations stay, as in qspy.
   */
  resetTargetDictionaries(): void {
    this.objects.clear();
    this.functions.clear();
    this.userRecords.clear();
    this.userRecords.set(QUTEST_ON_POST.rec, QUTEST_ON_POST.name);
    this.signals.length = 0;
  }

  object(name: string): bigint | undefined {
    return firstKey(this.objects, name);
  }

  function(name: string): bigint | undefined {
    return firstKey(this.functions, name);
  }

  userRecord(name: string): number | undefined {
    return firstKey(this.userRecords, name);
  }

  enumValue(group: number, name: string): number | undefined {
    return firstKey(this.enums[group & 7], name);
  }

  /** A signal registered globally (object 0) or for `scope`; undefined if there is none. */
  signal(name: string, scope: bigint | null): number | undefined {
    for (const e of this.signals) {
      if (e.name === name && (e.obj === 0n || (scope !== null && e.obj === scope))) return e.sig;
    }
    return undefined;
  }

  /** Name of an object address, for answers (`0x...` if unknown). */
  objectName(address: bigint): string | undefined {
    return this.objects.get(address);
  }

  /**
   * The names a person may type, for the control panel: objects, functions, signals (each
   * once) and commands, sorted, at most `limit` of each.
   */
  names(limit = 1000): { objects: string[]; functions: string[]; signals: string[]; commands: string[] } {
    const sorted = (names: Iterable<string>) => [...new Set(names)].sort().slice(0, limit);
    return {
      objects: sorted(this.objects.values()),
      functions: sorted(this.functions.values()),
      signals: sorted(this.signals.map((e) => e.name)),
      commands: sorted(this.enums[QS_CMD_ENUM_GROUP].values()),
    };
  }

  /** Counts of each dictionary, for the status page. */
  sizes(): { objects: number; functions: number; signals: number; userRecords: number; commands: number } {
    return {
      objects: this.objects.size,
      functions: this.functions.size,
      signals: this.signals.length,
      userRecords: this.userRecords.size,
      commands: this.enums[QS_CMD_ENUM_GROUP].size,
    };
  }
}

function firstKey<K extends number | bigint>(map: Map<K, string>, name: string): K | undefined {
  let best: K | undefined;
  for (const [key, n] of map) {
    if (n === name && (best === undefined || key < best)) best = key;
  }
  return best;
}
