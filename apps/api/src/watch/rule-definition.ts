import {
  RULE_PRESETS,
  type RuleCondition,
  type RuleInput,
  type RuleRecordFilter,
  type RuleScope,
} from '@tracehub/api-contract';
import { RecordName, recordMatcher, type TraceRecord } from '@tracehub/contracts';

/** A rule's definition as the evaluator takes it (the stored row's parts, typed). */
export interface RuleDefinition {
  id: string;
  name: string;
  scope: RuleScope;
  condition: RuleCondition;
}

/** A rule's condition: the one given, else its preset's; undefined when it has neither. */
export function conditionOf(input: Pick<RuleInput, 'condition' | 'preset'>): RuleCondition | undefined {
  return input.condition ?? (input.preset ? RULE_PRESETS[input.preset] : undefined);
}

/** `*` any run of characters, `?` one; everything else literal. */
function globPattern(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** Whether a link is in a rule's scope (every part optional; parts combine with AND). */
export function scopeMatcher(scope: RuleScope): (link: { rig: string; link: string; protocol: string }) => boolean {
  const rigs = scope.rigs?.map(globPattern);
  const links = scope.links?.map(globPattern);
  const protocols = scope.protocols?.length ? new Set<string>(scope.protocols) : undefined;
  return (l) =>
    (!rigs?.length || rigs.some((p) => p.test(l.rig))) &&
    (!links?.length || links.some((p) => p.test(l.link))) &&
    (!protocols || protocols.has(l.protocol));
}

/** The record filter as a function: the shared record filter, then the fields each equal. */
export function recordFilterMatcher(filter: RuleRecordFilter): (r: TraceRecord) => boolean {
  const { fields, ...content } = filter;
  const matches = recordMatcher(content);
  const wanted = Object.entries(fields ?? {});
  return (r) => matches(r) && wanted.every(([k, v]) => r.fields[k] === v);
}

const DECODER_NOTICES = new Set<string>([RecordName.SEQ_GAP, RecordName.LINK_LOST]);

/** Which records count towards a record-borne condition (undefined: the condition is not about records). */
export function countedRecords(condition: RuleCondition): ((r: TraceRecord) => boolean) | undefined {
  switch (condition.kind) {
    case 'records':
      return recordFilterMatcher(condition.filter);
    case 'bytes-lost':
      return (r) => r.name === RecordName.LINK_LOST;
    case 'gaps':
      return (r) => r.name === RecordName.SEQ_GAP;
    case 'decode-errors':
      return (r) => r.kind === 'error' && !DECODER_NOTICES.has(r.name);
    case 'target-reset':
      return (r) => r.name === RecordName.QS_TARGET_INFO && r.fields.reset === true;
    default:
      return undefined;
  }
}

/** What an alert of the condition says, in a line. */
export function describeCondition(condition: RuleCondition): string {
  const windowed = (what: string) => {
    const count = 'count' in condition ? (condition.count ?? 1) : 1;
    const seconds = 'windowSeconds' in condition ? (condition.windowSeconds ?? 60) : 60;
    return count === 1 ? what : `${count} or more ${what} within ${seconds} s`;
  };
  switch (condition.kind) {
    case 'records': {
      const f = condition.filter;
      const parts = [
        f.names?.join('|'),
        f.kinds?.join('|'),
        f.text && `"${f.text}"`,
        f.qsObj && `obj ${f.qsObj}`,
        f.qsSig && `sig ${f.qsSig}`,
        f.stpMaster !== undefined && `master ${f.stpMaster}`,
        f.stpChannel !== undefined && `channel ${f.stpChannel}`,
      ].filter(Boolean);
      return windowed(`records matching ${parts.join(', ') || 'any'}`);
    }
    case 'silent':
      return `no record for ${condition.seconds} s while connected`;
    case 'disconnected':
      return `disconnected for ${condition.seconds} s`;
    case 'bytes-lost':
      return windowed('link byte losses (LINK_LOST)');
    case 'gaps':
      return windowed('sequence gaps');
    case 'decode-errors':
      return windowed('decode errors');
    case 'records-refused':
      return windowed('records refused by storage');
    case 'target-reset':
      return windowed('target resets');
    case 'target-info-change':
      return 'a new target build';
  }
}
