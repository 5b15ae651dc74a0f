import { type Static, Type } from '@sinclair/typebox';
import { EXPORT_FORMATS } from '@tracehub/contracts/export-formats';
import { RecordFilterQuery, TimeRangeQuery, TraceRecordRef } from './common.js';

/** The query of `GET /records`, pages of at most `maxPageSize`. */
export const recordsQuery = (maxPageSize: number) =>
  Type.Composite([
    RecordFilterQuery,
    TimeRangeQuery,
    Type.Object({
      order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' }),
      limit: Type.Integer({
        minimum: 1,
        maximum: maxPageSize,
        default: 100,
        description: `page size, at most ${maxPageSize}`,
      }),
      cursor: Type.Optional(
        Type.String({ minLength: 1, maxLength: 400, description: 'opaque cursor from `next` or `prev`' }),
      ),
    }),
  ]);

/** `GET /records`: a page of records with the cursors of its neighbours. */
export const RecordsPage = Type.Object({
  records: Type.Array(TraceRecordRef),
  next: Type.Union([Type.String(), Type.Null()], {
    description: 'cursor of the following page, null at the end',
  }),
  prev: Type.Union([Type.String(), Type.Null()], {
    description: 'cursor of the page before, null at the start',
  }),
});
export type RecordsPage = Static<typeof RecordsPage>;

export const ExportFormat = Type.Union(
  EXPORT_FORMATS.map((f) => Type.Literal(f)),
  {
    description:
      "qspy: the text qspy prints; ndjson: one TraceRecord per line; csv: one row per record; raw: the bytes the link sent, exactly (a session stored before link bytes were kept, or a filtered range: its records' frames, QS re-escaped), to replay into qspy or `tracehub decode`; perfetto: a Chrome JSON trace (ui.perfetto.dev) with a track per active object or STP master/channel, states as slices, events as instants, queue and pool counters",
  },
);

/** `GET /records/export`: the filters and the format. */
export const RecordsExportQuery = Type.Composite([
  RecordFilterQuery,
  TimeRangeQuery,
  Type.Object({ format: ExportFormat }),
]);

/** `GET /sessions/{id}/export` (its path takes `SessionParams`). */
export const SessionExportQuery = Type.Object({ format: ExportFormat });

/** `GET /live/sse` and `/live/ws`: the record filters, and the token (a browser cannot set headers there). */
export const LiveQuery = Type.Composite([
  RecordFilterQuery,
  Type.Object({ access_token: Type.Optional(Type.String()) }),
]);
