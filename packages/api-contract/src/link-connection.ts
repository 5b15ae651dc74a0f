import { type Static, Type } from '@sinclair/typebox';

/** `GET /links/{id}/connection`: how the link's gateway is connected to the target. */
export const LinkConnection = Type.Object({
  linkId: Type.Integer(),
  targetConnected: Type.Boolean(),
  target: Type.Union(
    [
      Type.Object({
        address: Type.String({
          description: "the target's address:port (tcp, udp), or the device or file the link reads",
        }),
        since: Type.String({ format: 'date-time', description: 'when it connected' }),
      }),
      Type.Null(),
    ],
    { description: 'the target the open session reads from; null when none is connected' },
  ),
  session: Type.Union([Type.String(), Type.Null()], { description: 'the link session open now' }),
  source: Type.Object({
    kind: Type.String({ description: 'tcp-listen, tcp-connect, serial, udp, file or stdin' }),
    description: Type.String({ description: "the source as the gateway's log names it: tcp-listen 0.0.0.0:6601" }),
    secondTarget: Type.Optional(
      Type.Union([Type.Literal('replace'), Type.Literal('refuse')], {
        description: 'tcp-listen: a second target connecting replaces the first, or is refused',
      }),
    ),
    idleTimeoutMs: Type.Optional(
      Type.Integer({ description: 'tcp-listen: a connection that sends nothing this long is closed, ms (0: never)' }),
    ),
  }),
  notTaken: Type.Object(
    { refused: Type.Integer(), replaced: Type.Integer(), idleClosed: Type.Integer() },
    { description: 'connections refused, replaced by a newer one, or closed for silence since the gateway started' },
  ),
});

export type LinkConnection = Static<typeof LinkConnection>;
