import { type Static, type TProperties, Type } from '@sinclair/typebox';

/** A request body: these properties and no others. */
const body = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });

/** `POST /links/{id}/markers`: a user marker on the live link, after every byte it has read. */
export const MarkerRequest = body({
  comment: Type.Optional(
    Type.String({
      maxLength: 1024,
      pattern: '^[^\\u0000]*$',
      description: 'the marker comment (STP: a C string in marker 0x02; QS: the note record text), no NUL',
    }),
  ),
});
export type MarkerRequest = Static<typeof MarkerRequest>;

/** `POST /links/{id}/time-base`: a new time base for the STP link's output times, from this point. */
export const TimeBaseRequest = body({
  offsetNs: Type.String({
    pattern: '^-?[0-9]{1,18}$',
    description: 'output time = receive time + this offset, ns (decimal string); gives the two 0x03 markers',
  }),
});
export type TimeBaseRequest = Static<typeof TimeBaseRequest>;

export const MarkerReply = Type.Object({
  linkId: Type.Integer(),
  session: Type.String({ description: 'the link session the marker went into' }),
  marker: Type.Union([
    Type.Object({ kind: Type.Literal('user'), comment: Type.Optional(Type.String()) }),
    Type.Object({ kind: Type.Literal('timeBase'), offsetNs: Type.String() }),
  ]),
});
export type MarkerReply = Static<typeof MarkerReply>;

/** `POST /links/{id}/upload`: data for the device, sent with the trace box's UART upload. */
export const UploadRequest = body({
  // 512 KiB of data as base64.
  data: Type.String({
    maxLength: 699_052,
    minLength: 4,
    pattern: '^[A-Za-z0-9+/]*={0,2}$',
    description: 'base64 of 1..524288 bytes',
  }),
});
export type UploadRequest = Static<typeof UploadRequest>;

export const UploadReply = Type.Object({
  linkId: Type.Integer(),
  session: Type.Union([Type.String(), Type.Null()]),
  ok: Type.Boolean(),
  outcome: Type.Union(
    [
      'uploaded',
      'no-bit-rate',
      'bit-rate-too-low',
      'bit-rate-deviation',
      'no-length-ack',
      'no-data-ack',
      'write-failed',
    ].map((o) => Type.Literal(o)),
    { description: 'how the upload went (reference §3.1): uploaded, or the rule it failed on' },
  ),
  error: Type.String({ description: "what went wrong, in a sentence ('' when uploaded)" }),
  bitRate: Type.Union([Type.Number(), Type.Null()], { description: 'the bit rate the device asked for' }),
  setBitRate: Type.Union([Type.Number(), Type.Null()], { description: 'the rate the UART was set to' }),
  bytes: Type.Integer({ description: 'bytes of data sent' }),
  ms: Type.Integer(),
});
export type UploadReply = Static<typeof UploadReply>;
