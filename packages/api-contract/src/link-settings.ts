import { type Static, Type } from '@sinclair/typebox';

/** A link's whole settings document. */
export const SettingsDocument = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'the whole settings document of the link (QS: version, objPtrSize, funPtrSize, timeSize, sigSize, eventSize, queueCtrSize, poolCtrSize, poolBlkSize, teCtrSize, dictionaries (a qspy .dic text); STP/SWD: version, littleEndianMasters, output, resyncPauseMs, maxPauseMs, start, port, processor)',
});
/** When a change of settings applies: from the next session, or now (a new session at once). */
export const SettingsApply = Type.Union([Type.Literal('next-session'), Type.Literal('now')]);

/** A change of a link's settings, with who made it. */
export const LinkSettingsChange = Type.Object({
  at: Type.String({ format: 'date-time' }),
  by: Type.String(),
  via: Type.String(),
  applies: SettingsApply,
  previous: SettingsDocument,
  settings: SettingsDocument,
});

/** A setting a link of a protocol takes. */
export const SettingName = Type.Object({
  name: Type.String(),
  takes: Type.String({ description: 'its values as text, as `text` in a PUT and `tracehub link set` take them' }),
  description: Type.String(),
});

/** The settings the latest session of a link was decoded with, and where they came from. */
export const SettingsInUse = Type.Object(
  {
    session: Type.String(),
    startedAt: Type.String({ format: 'date-time' }),
    settings: Type.Record(Type.String(), Type.Unknown(), {
      description: 'what the decoder took: stored, then fromAddress over it',
    }),
    stored: Type.Record(Type.String(), Type.Unknown(), {
      description: "the link's stored document when the session started",
    }),
    fromAddress: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'settings the gateway gave with the session (its link address in TRACEHUB_LINKS, or tracehub replay flags): they override the stored ones',
    }),
  },
  { description: 'the settings in use for the latest session' },
);

/** `GET /links/{id}/settings`. */
export const LinkSettingsReply = Type.Object({
  linkId: Type.Integer(),
  protocol: Type.String(),
  settings: SettingsDocument,
  accepts: Type.Array(SettingName, { description: 'the settings a link of this protocol takes' }),
  inUse: Type.Union([SettingsInUse, Type.Null()], { description: 'null when the link has no session yet' }),
  history: Type.Array(LinkSettingsChange, { description: 'changes, newest first' }),
});

/** The body of `PUT /links/{id}/settings`. */
export const LinkSettingsPut = Type.Object(
  {
    settings: SettingsDocument,
    text: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 65_536 }), {
        description:
          'settings written as text, laid over `settings`: `{"littleEndianMasters": "17,0x12", "version": "7.4.0"}`, read as `tracehub link set name=value` and link addresses read them',
      }),
    ),
    apply: Type.Optional(
      Type.Union([Type.Literal('next-session'), Type.Literal('now')], {
        description:
          "'next-session' (default): from the link's next session; 'now': the gateway ends the session and starts a new one on the same connection",
      }),
    ),
    by: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000]*$', description: 'who makes the change' }),
    ),
    via: Type.Optional(
      Type.Union([Type.Literal('api'), Type.Literal('dashboard'), Type.Literal('cli')], {
        default: 'api',
        description: "where the change was made: 'api', 'dashboard', or 'cli' (tracehub link set --api)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** `PUT /links/{id}/settings`. */
export const LinkSettingsPutReply = Type.Object({
  linkId: Type.Integer(),
  settings: SettingsDocument,
  applies: SettingsApply,
  session: Type.Union([Type.String(), Type.Null()], {
    description: "with apply 'now': the session the new settings start with",
  }),
  note: Type.Optional(Type.String()),
});

export type SettingsApply = Static<typeof SettingsApply>;
export type LinkSettingsChange = Static<typeof LinkSettingsChange>;
export type SettingName = Static<typeof SettingName>;
export type SettingsInUse = Static<typeof SettingsInUse>;
export type LinkSettingsReply = Static<typeof LinkSettingsReply>;
export type LinkSettingsPut = Static<typeof LinkSettingsPut>;
export type LinkSettingsPutReply = Static<typeof LinkSettingsPutReply>;
