import type { ReplayRequest } from '@tracehub/api-contract';

export {
  type ModuleTable,
  ModuleTableSchema,
  type ReplayRequest,
  ReplaySchema,
  type ReporterEndpointInput,
  ReporterEndpointSchema,
  type ReporterFilter,
  ReporterFilterSchema,
  type ReporterOptions,
  ReporterOptionsProperties,
  ReporterOptionsSchema,
} from '@tracehub/api-contract';

/** Why a replay request cannot be served, or undefined when it can. */
export function replayProblem(replay: ReplayRequest | undefined): string | undefined {
  if (!replay) return undefined;
  const hasRange = replay.from !== undefined || replay.to !== undefined;
  if (replay.session === undefined && !hasRange) return 'replay needs a session or a from/to time range';
  if (hasRange && (replay.from === undefined || replay.to === undefined)) return 'replay range needs both from and to';
  for (const [name, value] of [
    ['from', replay.from],
    ['to', replay.to],
  ] as const) {
    // A date the schema lets through but no clock has (a leap second, 24:00): refused here, before any query.
    if (value !== undefined && Number.isNaN(Date.parse(value)))
      return `replay ${name} ${JSON.stringify(value)} is not a time: use RFC 3339, e.g. 2026-11-22T00:00:00Z`;
  }
  if (replay.from !== undefined && replay.to !== undefined && Date.parse(replay.from) >= Date.parse(replay.to))
    return 'replay range: from must be before to';
  return undefined;
}
