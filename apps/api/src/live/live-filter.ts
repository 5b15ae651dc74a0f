import type { TraceRecord } from '@tracehub/contracts';
import type { RecordFilter } from '@tracehub/db';

/** The records-page filter, applied in memory to live records (no time range: live is now). */
export function matchesLive(f: RecordFilter, r: TraceRecord): boolean {
  if (f.rig !== undefined && r.rig !== f.rig) return false;
  if (f.link !== undefined && r.link !== f.link) return false;
  if (f.session !== undefined && r.session !== f.session) return false;
  if (f.protocol !== undefined && r.protocol !== f.protocol) return false;
  if (f.names?.length && !f.names.includes(r.name)) return false;
  if (f.types?.length && !f.types.includes(r.type)) return false;
  if (f.kinds?.length && !f.kinds.includes(r.kind)) return false;
  if (f.qsObj !== undefined && r.qs?.obj !== f.qsObj) return false;
  if (f.qsSig !== undefined && r.qs?.sig !== f.qsSig) return false;
  if (f.qsPrio !== undefined && r.qs?.prio !== f.qsPrio) return false;
  if (f.stpMaster !== undefined && r.stp?.master !== f.stpMaster) return false;
  if (f.stpChannel !== undefined && r.stp?.channel !== f.stpChannel) return false;
  if (f.text !== undefined && f.text !== '' && !r.text.toLowerCase().includes(f.text.toLowerCase())) return false;
  return true;
}
