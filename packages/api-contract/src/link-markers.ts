import { type Static, Type } from '@sinclair/typebox';

/** `POST /links/{id}/markers`: a user marker on the live link, after every byte it has read. */
export const MarkerRequest = Type.Object(
  {
    comment: Type.Optional(
      Type.String({
        maxLength: 1024,
        pattern: '^[^\\u0000]*$',
        description: 'the marker comment (STP: a C string in marker 0x02; QS: the note record text), no NUL',
      }),
    ),
  },
  { additionalProperties: false },
);
export type MarkerRequest = Static<typeof MarkerRequest>;

/** `POST /links/{id}/time-base`: a new time base for the STP link's output times, from this point. */
export const TimeBaseRequest = Type.Object(
  {
    offsetNs: Type.String({
      pattern: '^-?[0-9]{1,18}$',
      description: 'output time = receive time + this offset, ns (decimal string); gives the two 0x03 markers',
    }),
  },
  { additionalProperties: false },
);
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
