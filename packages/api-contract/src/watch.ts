import { type Static, Type } from '@sinclair/typebox';
import { PROTOCOLS, RECORD_KINDS } from '@tracehub/contracts';

/*
 * Watch rules and the alerts they raise: a rule as `POST /rules` takes it, an alert as
 * `/alerts` answers it, a backtest's result and the comparison of two sessions.
 */

/** A glob over rig or link names: `*` any run of characters, `?` one. */
const Glob = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._*?-]+$' });
const globs = (what: string) => Type.Array(Glob, { maxItems: 100, description: `${what} (glob patterns, any of)` });
const Seconds = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: 86_400 * 7, description });

export const RuleScopeSchema = Type.Object(
  {
    rigs: Type.Optional(globs('rigs')),
    links: Type.Optional(globs('links')),
    protocols: Type.Optional(Type.Array(Type.Union(PROTOCOLS.map((p) => Type.Literal(p))), { maxItems: 3 })),
  },
  {
    additionalProperties: false,
    description: 'the links the rule watches; every part optional, parts combine with AND',
  },
);
export type RuleScope = Static<typeof RuleScopeSchema>;

/** The record filter of the live tail and the records page, as a rule takes it. */
export const RuleRecordFilterSchema = Type.Object(
  {
    names: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500 })),
    kinds: Type.Optional(Type.Array(Type.Union(RECORD_KINDS.map((k) => Type.Literal(k))), { maxItems: 5 })),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'case-insensitive substring' })),
    qsObj: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    qsSig: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    stpMaster: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffff })),
    stpChannel: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffff })),
    fields: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 100 }),
        Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
        {
          description: 'field values the record must have (each equal)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type RuleRecordFilter = Static<typeof RuleRecordFilterSchema>;

const windowed = {
  count: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'fires at this many within the window (default 1)' }),
  ),
  windowSeconds: Type.Optional(
    Seconds('the window the count is taken over; the alert resolves once fewer remain in it (default 60)'),
  ),
};

export const RuleConditionSchema = Type.Union(
  [
    Type.Object(
      { kind: Type.Literal('records'), filter: RuleRecordFilterSchema, ...windowed },
      { additionalProperties: false, description: 'records matching a filter, count within a window' },
    ),
    Type.Object(
      { kind: Type.Literal('silent'), seconds: Seconds('no record for this long while the link is connected') },
      { additionalProperties: false },
    ),
    Type.Object(
      { kind: Type.Literal('disconnected'), seconds: Seconds('no open session on the link for this long') },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        kind: Type.Union([
          Type.Literal('bytes-lost'),
          Type.Literal('gaps'),
          Type.Literal('decode-errors'),
          Type.Literal('records-refused'),
          Type.Literal('target-reset'),
          Type.Literal('target-info-change'),
        ]),
        ...windowed,
      },
      {
        additionalProperties: false,
        description:
          'bytes-lost: LINK_LOST records; gaps: SEQ_GAP records; decode-errors: error records; records-refused: records storage refused; target-reset: a target reset; target-info-change: a new target build on the link',
      },
    ),
  ],
  { description: 'what makes the rule fire' },
);
export type RuleCondition = Static<typeof RuleConditionSchema>;

/** The ready-made conditions: the QS assertion record and the STP decoders' error markers. */
export const RULE_PRESETS: Readonly<Record<'qs-assert' | 'stp-errors', RuleCondition>> = {
  'qs-assert': { kind: 'records', filter: { names: ['QS_ASSERT_FAIL'] }, count: 1, windowSeconds: 60 },
  'stp-errors': {
    kind: 'records',
    filter: {
      names: [
        'TB_ERROR_DATA_CORRUPTED',
        'TB_ERROR_PAUSE_IN_STP_STREAM_LONG',
        'TB_ERROR_OVERFLOW',
        'TB_ERROR_RESERVED_STP_PACKET',
      ],
    },
    count: 1,
    windowSeconds: 60,
  },
};

export const WebhookTargetSchema = Type.Object(
  {
    url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 }),
    secret: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 200,
        description: 'signs the body: X-Tracehub-Signature: sha256=<hex HMAC>',
      }),
    ),
    timeoutMs: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 60_000, description: 'ms per attempt (default 5000)' }),
    ),
    retries: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10, description: 'attempts after the first (default 4)' }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookTarget = Static<typeof WebhookTargetSchema>;

const RuleId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' });

export const RuleInputSchema = Type.Object(
  {
    id: Type.Optional(RuleId),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    preset: Type.Optional(
      Type.Union([Type.Literal('qs-assert'), Type.Literal('stp-errors')], {
        description: 'a ready-made condition (qs-assert: QS_ASSERT_FAIL records; stp-errors: STP error markers)',
      }),
    ),
    scope: Type.Optional(RuleScopeSchema),
    condition: Type.Optional(RuleConditionSchema),
    webhooks: Type.Optional(Type.Array(WebhookTargetSchema, { maxItems: 10 })),
    enabled: Type.Optional(Type.Boolean({ description: 'default true' })),
  },
  { additionalProperties: false },
);
export type RuleInput = Static<typeof RuleInputSchema>;

export const RuleSchema = Type.Object(
  {
    id: RuleId,
    name: Type.String(),
    scope: RuleScopeSchema,
    condition: RuleConditionSchema,
    webhooks: Type.Array(
      Type.Object({
        url: Type.String({
          description:
            'whole for a token with control scope; for read scope its origin only (`https://hooks.example.com/***`): the path and query, where webhook services keep a credential, are masked',
        }),
        signed: Type.Boolean(),
        timeoutMs: Type.Integer(),
        retries: Type.Integer(),
      }),
    ),
    enabled: Type.Boolean(),
    silencedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    /** The API process evaluating the rule now (null: none yet). */
    evaluatedBy: Type.Union([Type.String(), Type.Null()]),
    firing: Type.Integer({ minimum: 0, description: 'alerts of the rule firing now' }),
  },
  { additionalProperties: false },
);
export type Rule = Static<typeof RuleSchema>;
export const RulesReply = Type.Object({ rules: Type.Array(RuleSchema) }, { additionalProperties: false });

export const AlertStateSchema = Type.Union([Type.Literal('firing'), Type.Literal('resolved')]);
export type AlertState = Static<typeof AlertStateSchema>;

export const AlertSchema = Type.Object(
  {
    id: Type.Integer(),
    rule: Type.String(),
    ruleName: Type.String(),
    rig: Type.String(),
    link: Type.String(),
    state: AlertStateSchema,
    summary: Type.String(),
    /** The first matching record, when a record caused it. */
    session: Type.Union([Type.String(), Type.Null()]),
    seq: Type.Union([Type.Integer(), Type.Null()]),
    /** When the cause happened (the first matching record's host time, or when the link went silent). */
    at: Type.String({ format: 'date-time' }),
    firedAt: Type.String({ format: 'date-time' }),
    resolvedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    acknowledgedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    acknowledgedBy: Type.Union([Type.String(), Type.Null()]),
    /** The dashboard at that moment (a path and fragment from the API's origin). */
    dashboardUrl: Type.String(),
  },
  { additionalProperties: false },
);
export type Alert = Static<typeof AlertSchema>;
export const AlertsReply = Type.Object({ alerts: Type.Array(AlertSchema) }, { additionalProperties: false });

/** An alert a backtest would have raised. */
export const BacktestAlertSchema = Type.Object(
  {
    rig: Type.String(),
    link: Type.String(),
    session: Type.Union([Type.String(), Type.Null()]),
    seq: Type.Union([Type.Integer(), Type.Null()]),
    at: Type.String({ format: 'date-time' }),
    resolvedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    summary: Type.String(),
  },
  { additionalProperties: false },
);
export const BacktestReply = Type.Object(
  {
    rule: Type.String(),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    sessions: Type.Integer(),
    records: Type.Integer(),
    alerts: Type.Array(BacktestAlertSchema),
  },
  { additionalProperties: false },
);
export type BacktestResult = Static<typeof BacktestReply>;

/** Two sessions compared: counts per object/channel and record name, and the first divergence. */
export const CompareCountSchema = Type.Object(
  {
    source: Type.String({ description: 'the active object (QS) or master/channel (STP), "" for neither' }),
    name: Type.String(),
    a: Type.Integer(),
    b: Type.Integer(),
    difference: Type.Integer({ description: 'b - a' }),
  },
  { additionalProperties: false },
);
const AlignedRecord = Type.Union([
  Type.Object(
    { seq: Type.Integer(), name: Type.String(), source: Type.String(), signal: Type.String(), text: Type.String() },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export const CompareReply = Type.Object(
  {
    a: Type.String(),
    b: Type.String(),
    recordsA: Type.Integer(),
    recordsB: Type.Integer(),
    counts: Type.Array(CompareCountSchema),
    /** Where the two record sequences first differ (by name, object and signal); null: they agree. */
    divergence: Type.Union([
      Type.Object(
        {
          /** Records alike before it. */
          index: Type.Integer(),
          a: AlignedRecord,
          b: AlignedRecord,
          linkA: Type.Union([Type.String(), Type.Null()]),
          linkB: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);
export type CompareResult = Static<typeof CompareReply>;
