/**
 * The formats records are exported in (`?format=` of the export routes): the text qspy
 * prints, one TraceRecord per line, a CSV row per record, the bytes the link sent, and a
 * Perfetto (Chrome JSON) trace. The API serves exactly these; the dashboard offers them.
 */
export const EXPORT_FORMATS = ['qspy', 'ndjson', 'csv', 'raw', 'perfetto'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * What an export format is called where a person picks one: `qspy` is the records' text, which
 * is qspy's own text for QS only; STP and SWD text is tracehub's, so it is not called qspy there.
 */
export function exportFormatLabel(format: ExportFormat, protocol?: string): string {
  if (format === 'qspy') return protocol === 'qs' ? 'qspy text' : 'text';
  if (format === 'raw') return 'raw bytes';
  return format;
}

/** The parts of a records filter of which an export needs one (present: not undefined). */
export interface ExportScope {
  session?: unknown;
  rig?: unknown;
  from?: unknown;
}

/**
 * Whether the records a filter matches may be exported: those of a session, of a rig, or
 * from a start time on. Exporting the whole store is not offered.
 */
export function isExportAllowed(filter: ExportScope): boolean {
  return filter.session !== undefined || filter.rig !== undefined || filter.from !== undefined;
}

/** Why an export was refused, for a filter `isExportAllowed` turns down. */
export const EXPORT_SCOPE_NEEDED =
  'an export needs a session, a rig or a from time (exporting the whole store is not offered)';
