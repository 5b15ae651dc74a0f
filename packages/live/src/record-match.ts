import type { Protocol, RecordKind, TraceRecord } from '@tracehub/contracts';

/**
 * Which records a reader wants: the one filter language of the live records (the live tail's
 * query parameters and a PalmTrace endpoint's `filter` both become one). Every part is
 * optional; lists mean "any of", parts combine with AND.
 */
export interface RecordMatch {
  rigs?: readonly string[];
  links?: readonly string[];
  sessions?: readonly string[];
  protocols?: readonly Protocol[];
  names?: readonly string[];
  types?: readonly number[];
  kinds?: readonly RecordKind[];
  qsObj?: string;
  qsSig?: string;
  qsPrio?: number;
  stpMaster?: number;
  stpChannel?: number;
  /** Case-insensitive substring of the record's text. */
  text?: string;
}

const anyOf = <T>(list: readonly T[] | undefined, value: T): boolean =>
  list === undefined || list.length === 0 || list.includes(value);

/** Whether any record of a batch from this link can match (skips whole batches cheaply). */
export function admitsLink(match: RecordMatch | undefined, link: { protocol: string; rig: string; link: string }) {
  if (!match) return true;
  return (
    anyOf(match.rigs, link.rig) &&
    anyOf(match.links, link.link) &&
    anyOf(match.protocols as readonly string[] | undefined, link.protocol)
  );
}

export function matchesRecord(match: RecordMatch | undefined, r: TraceRecord): boolean {
  if (!match) return true;
  if (!admitsLink(match, r)) return false;
  if (!anyOf(match.sessions, r.session)) return false;
  if (!anyOf(match.names, r.name) || !anyOf(match.types, r.type) || !anyOf(match.kinds, r.kind)) return false;
  if (match.qsObj !== undefined && r.qs?.obj !== match.qsObj) return false;
  if (match.qsSig !== undefined && r.qs?.sig !== match.qsSig) return false;
  if (match.qsPrio !== undefined && r.qs?.prio !== match.qsPrio) return false;
  if (match.stpMaster !== undefined && r.stp?.master !== match.stpMaster) return false;
  if (match.stpChannel !== undefined && r.stp?.channel !== match.stpChannel) return false;
  if (match.text && !r.text.toLowerCase().includes(match.text.toLowerCase())) return false;
  return true;
}
