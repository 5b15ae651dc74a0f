import type { Protocol } from './names.js';
import type { RecordKind, TraceRecord } from './record.js';
import { compareDecimal } from './records-summary.js';

/**
 * What a record's own content is matched by: the part every record filter of tracehub has,
 * the live tail's, a PalmTrace endpoint's and a stored-records query's (`RecordFilter` of
 * `@tracehub/db`) alike. Lists mean "any of"; parts combine with AND.
 */
export interface RecordContentMatch {
  names?: readonly string[];
  types?: readonly number[];
  kinds?: readonly RecordKind[];
  qsObj?: string;
  qsSig?: string;
  qsPrio?: number;
  stpMaster?: number;
  stpChannel?: number;
  /** Case-insensitive substring of the record's text, taken literally (Unicode case folding). */
  text?: string;
}

/**
 * Which records a reader wants: the one record filter of tracehub. The live tail's query
 * parameters, a PalmTrace endpoint's `filter` and a stored-records query (which prunes
 * blocks with its own first) all become one, matched by {@link recordMatcher}. Every part is
 * optional; lists mean "any of", parts combine with AND.
 */
export interface RecordMatch extends RecordContentMatch {
  rigs?: readonly string[];
  links?: readonly string[];
  sessions?: readonly string[];
  protocols?: readonly Protocol[];
  /** Host time range, ns since the epoch as decimal text: from inclusive, to exclusive. */
  fromNs?: string;
  toNs?: string;
}

/** `text` as a case-insensitive pattern that matches it literally. */
export function literalPattern(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'iu');
}

const anyOf = <T>(list: readonly T[] | undefined, value: T): boolean =>
  list === undefined || list.length === 0 || list.includes(value);

/** Whether any record of a batch (or gap) from this link can match: skips whole batches cheaply. */
export function admitsLink(match: RecordMatch | undefined, link: { protocol: string; rig: string; link: string }) {
  if (!match) return true;
  return (
    anyOf(match.rigs, link.rig) &&
    anyOf(match.links, link.link) &&
    anyOf(match.protocols as readonly string[] | undefined, link.protocol)
  );
}

const setOf = <T>(list: readonly T[] | undefined) => (list?.length ? new Set(list) : undefined);

/**
 * The match as a function, made once per reader: lists become sets and the text a pattern,
 * so a record costs a few comparisons (live records are matched in the NATS callback).
 */
export function recordMatcher(match: RecordMatch | undefined): (r: TraceRecord) => boolean {
  if (!match) return () => true;
  const rigs = setOf(match.rigs);
  const links = setOf(match.links);
  const sessions = setOf(match.sessions);
  const protocols = setOf<string>(match.protocols);
  const names = setOf(match.names);
  const types = setOf(match.types);
  const kinds = setOf<string>(match.kinds);
  const text = match.text ? literalPattern(match.text) : undefined;
  const { qsObj, qsSig, qsPrio, stpMaster, stpChannel, fromNs, toNs } = match;
  return (r) => {
    if (rigs && !rigs.has(r.rig)) return false;
    if (links && !links.has(r.link)) return false;
    if (sessions && !sessions.has(r.session)) return false;
    if (protocols && !protocols.has(r.protocol)) return false;
    if (names && !names.has(r.name)) return false;
    if (types && !types.has(r.type)) return false;
    if (kinds && !kinds.has(r.kind)) return false;
    if (qsObj !== undefined && r.qs?.obj !== qsObj) return false;
    if (qsSig !== undefined && r.qs?.sig !== qsSig) return false;
    if (qsPrio !== undefined && r.qs?.prio !== qsPrio) return false;
    if (stpMaster !== undefined && r.stp?.master !== stpMaster) return false;
    if (stpChannel !== undefined && r.stp?.channel !== stpChannel) return false;
    if (fromNs !== undefined && compareDecimal(r.hostNs, fromNs) < 0) return false;
    if (toNs !== undefined && compareDecimal(r.hostNs, toNs) >= 0) return false;
    if (text !== undefined && !text.test(r.text)) return false;
    return true;
  };
}

const compiled = new WeakMap<RecordMatch, (r: TraceRecord) => boolean>();

/** Whether `r` matches (the match compiled once, on its first use). */
export function matchesRecord(match: RecordMatch | undefined, r: TraceRecord): boolean {
  if (!match) return true;
  let matcher = compiled.get(match);
  if (!matcher) compiled.set(match, (matcher = recordMatcher(match)));
  return matcher(r);
}
