import { randomBytes } from 'node:crypto';
import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from '@sinclair/typebox';
import {
  AlertSchema,
  AlertsReply,
  BacktestReply,
  EmptyBody,
  problemResponses,
  RULE_PRESETS,
  RuleConditionSchema,
  type RuleInput,
  RuleInputSchema,
  RuleSchema,
  RulesReply,
} from '@tracehub/api-contract';
import { NAME_PATTERN } from '@tracehub/contracts';
import {
  acknowledgeAlert,
  type Database,
  deleteWatchRule,
  disableWatchRule,
  firingAlertCounts,
  insertWatchRule,
  listAlerts,
  listWatchRules,
  type NewWatchRule,
  type SharedWatchRule,
  silenceWatchRule,
  updateWatchRule,
} from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import type { ServiceMetrics } from '@tracehub/service-kit';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { hasScope } from '../plugins/auth.js';
import { alertOf, ruleOf } from './alert-view.js';
import { backtestRule } from './backtest.js';
import { conditionOf } from './rule-definition.js';
import { RuleRunner, type RuleRunnerSettings, ruleDefinitionOf } from './rule-runner.js';
import { WebhookSender } from './webhooks.js';

export interface WatchRoutesOptions {
  db: Kysely<Database>;
  feed: RecordFeed;
  metrics: ServiceMetrics;
  /** This process's name in rule leases (the one its Reporter endpoint leases use). */
  replicaId: string;
  settings: RuleRunnerSettings;
  /** The first wait before a failed webhook is tried again, ms (tests shorten it). */
  webhookRetryMs?: number;
}

export const DEFAULT_WATCH_SETTINGS: RuleRunnerSettings = { leaseMs: 15_000, tickMs: 250, dashboardUrl: '' };

const RuleParams = Type.Object({ id: RuleSchema.properties.id });
const AlertParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const Instant = Type.String({ format: 'date-time', description: 'an ISO 8601 instant with its offset' });
const BacktestWindow = Type.Object({ from: Instant, to: Instant }, { additionalProperties: false });
/** The id a rule being edited is backtested under (no saved rule has it: ids start with a letter or digit). */
const UNSAVED_RULE = '(unsaved)';

declare module 'fastify' {
  interface FastifyInstance {
    /** The watch rules this process judges. */
    ruleRunner: RuleRunner;
  }
}

/**
 * Watch rules and alerts: `/rules` (read to list, control to change), `/alerts` (read to
 * list, control to acknowledge), the rule runner started when the app is ready and stopped
 * when it closes, and the `tracehub_alerts_firing` gauge.
 */
export const watchRoutes: FastifyPluginAsyncTypebox<WatchRoutesOptions> = async (app, options) => {
  const { db, settings } = options;
  const webhooks = new WebhookSender(app.log, options.webhookRetryMs);
  const runner = new RuleRunner({
    db,
    feed: options.feed,
    webhooks,
    log: app.log,
    replicaId: options.replicaId,
    settings,
  });
  app.addHook('onReady', async () => runner.start());
  app.addHook('onClose', async () => {
    await runner.stop();
    await webhooks.stop();
  });
  app.decorate('ruleRunner', runner);
  options.metrics.sampledGauge({
    name: 'alerts_firing',
    help: 'alerts firing now, by rule name, rig and link',
    labelNames: ['rule', 'rig', 'link'],
    samples: async () =>
      (await firingAlertCounts(db)).map((a) => [{ rule: a.rule, rig: a.rig, link: a.link }, a.n] as const),
  });
  options.metrics.sampledCounter({
    name: 'alert_webhooks_total',
    help: 'alert webhook deliveries by outcome (delivered, failed attempt, given up)',
    labelNames: ['outcome'],
    samples: () => [
      [{ outcome: 'delivered' }, webhooks.counts.delivered],
      [{ outcome: 'failed' }, webhooks.counts.failedAttempts],
      [{ outcome: 'given-up' }, webhooks.counts.givenUp],
    ],
  });

  const mustGetRule = async (id: string) => {
    const [rule] = await listWatchRules(db, id);
    if (!rule) throw httpErrors.notFound(`no watch rule ${JSON.stringify(id)}`);
    return rule;
  };

  /** A rule as this request may see it: webhook addresses whole for control scope, masked for read. */
  const ruleFor = (request: FastifyRequest, row: SharedWatchRule) => ruleOf(row, hasScope(request, 'control'));

  app.get('/rules', route({ summary: 'Every watch rule', response: { 200: RulesReply } }), async (request) => ({
    rules: (await listWatchRules(db)).map((row) => ruleFor(request, row)),
  }));

  app.get(
    '/rules/presets',
    route({
      summary: 'The ready-made conditions a rule may name as its preset',
      response: { 200: Type.Object({ presets: Type.Record(Type.String(), RuleConditionSchema) }) },
    }),
    async () => ({ presets: RULE_PRESETS }),
  );

  app.get(
    '/rules/:id',
    route({ summary: 'One watch rule', params: RuleParams, response: { 200: RuleSchema } }),
    async (request) => ruleFor(request, await mustGetRule(request.params.id)),
  );

  app.post('/rules', ADD_RULE, async (request, reply) => {
    const rule = newRule(request.body, request.body.id ?? `rule-${randomBytes(4).toString('hex')}`);
    if (!(await insertWatchRule(db, rule, { owner: runner.replicaId, leaseMs: settings.leaseMs }))) {
      throw httpErrors.conflict(`a watch rule named ${JSON.stringify(rule.id)} exists already`);
    }
    const stored = await mustGetRule(rule.id);
    await runner.adopt(stored);
    // Records published after this answer are judged by the rule.
    await options.feed.flush();
    return reply.code(201).send(ruleFor(request, stored));
  });

  app.put(
    '/rules/:id',
    route(
      {
        summary:
          'Change a watch rule (judged anew at once here, or by the process judging it within a fifth of its lease); disabling it resolves its firing alerts',
        params: RuleParams,
        body: Type.Omit(RuleInputSchema, ['id']),
        response: { 200: RuleSchema },
      },
      'control',
    ),
    async (request) => {
      const { id } = request.params;
      if (!(await updateWatchRule(db, newRule(request.body, id)))) await mustGetRule(id);
      const stored = await mustGetRule(id);
      await runner.reload(stored);
      // Disabled: what it fires is over (resolved, and told so); no process fires it any more.
      if (!stored.enabled) await runner.retire(stored, 'disabled');
      return ruleFor(request, await mustGetRule(id));
    },
  );

  const removal = { params: RuleParams, body: EmptyBody, response: { 204: Type.Null() } };
  app.delete(
    '/rules/:id',
    route(
      {
        summary: 'Remove a watch rule and its alerts (the webhooks are told those firing are resolved)',
        ...removal,
      },
      'control',
    ),
    async (request, reply) => {
      const rule = await mustGetRule(request.params.id);
      // Disabled first, so that no process fires it between its alerts resolved and its removal.
      await disableWatchRule(db, rule.id);
      await runner.retire(rule, 'removed');
      if (!(await deleteWatchRule(db, rule.id))) await mustGetRule(rule.id);
      runner.forget(rule.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/rules/:id/silence',
    route(
      {
        summary: 'Silence a rule for a time: its alerts are still kept, but no webhook is told',
        params: RuleParams,
        body: Type.Object(
          { seconds: Type.Integer({ minimum: 0, maximum: 30 * 86_400, description: '0 ends the silence' }) },
          { additionalProperties: false },
        ),
        response: { 200: RuleSchema },
      },
      'control',
    ),
    async (request) => {
      const { seconds } = request.body;
      const until = seconds === 0 ? null : new Date(Date.now() + seconds * 1000);
      if (!(await silenceWatchRule(db, request.params.id, until))) await mustGetRule(request.params.id);
      return ruleFor(request, await mustGetRule(request.params.id));
    },
  );

  /** A backtest's window from its query; a 400 unless `to` comes after `from`. */
  const windowOf = (query: { from: string; to: string }) => {
    const fromMs = Date.parse(query.from);
    const toMs = Date.parse(query.to);
    if (!(toMs > fromMs)) throw httpErrors.badRequest('query to: must come after from');
    return { fromMs, toMs };
  };

  app.post(
    '/rules/:id/backtest',
    route({
      summary: 'What the rule would have fired over stored history (nothing is stored or sent)',
      params: RuleParams,
      querystring: BacktestWindow,
      body: EmptyBody,
      response: { 200: BacktestReply },
    }),
    async (request) => {
      const { fromMs, toMs } = windowOf(request.query);
      const rule = await mustGetRule(request.params.id);
      return backtestRule(db, ruleDefinitionOf(rule), fromMs, toMs);
    },
  );

  app.post(
    '/rules/backtest',
    route({
      summary:
        'What a rule not saved (being edited) would have fired over stored history: the rule in the body, as `POST /rules` takes it (nothing is stored or sent)',
      querystring: BacktestWindow,
      body: Type.Omit(RuleInputSchema, ['id', 'webhooks', 'enabled']),
      response: { 200: BacktestReply },
    }),
    async (request) => {
      const { fromMs, toMs } = windowOf(request.query);
      const condition = conditionOf(request.body);
      if (!condition) throw httpErrors.badRequest("body: a rule needs a 'condition' or a 'preset'");
      const { name, scope = {} } = request.body;
      return backtestRule(db, { id: UNSAVED_RULE, name, scope, condition }, fromMs, toMs);
    },
  );

  app.get(
    '/alerts',
    route({
      summary: 'Alerts, newest first',
      querystring: Type.Object(
        {
          state: Type.Optional(AlertSchema.properties.state),
          rule: Type.Optional(RuleSchema.properties.id),
          rig: Type.Optional(Type.String({ pattern: NAME_PATTERN })),
          link: Type.Optional(Type.String({ pattern: NAME_PATTERN })),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 200 }),
        },
        { additionalProperties: false },
      ),
      response: { 200: AlertsReply },
    }),
    async (request) => ({
      alerts: (await listAlerts(db, request.query)).map((a) => alertOf(a, settings.dashboardUrl)),
    }),
  );

  app.post(
    '/alerts/:id/acknowledge',
    route(
      {
        summary: 'Acknowledge an alert (someone is on it)',
        params: AlertParams,
        body: Type.Object(
          { by: Type.String({ minLength: 1, maxLength: 100, description: 'who acknowledges it' }) },
          { additionalProperties: false },
        ),
        response: { 200: AlertSchema },
      },
      'control',
    ),
    async (request) => {
      const row = await acknowledgeAlert(db, request.params.id, request.body.by);
      if (!row) throw httpErrors.notFound(`no alert ${request.params.id}`);
      const [withName] = await listAlerts(db, { id: Number(row.id), limit: 1 });
      return alertOf(withName, settings.dashboardUrl);
    },
  );
};

/** `POST /rules`: 201 with the rule, 409 when its id is taken. */
const ADD_RULE = route(
  {
    summary: 'Add a watch rule: it applies to live records from now on',
    body: RuleInputSchema,
    response: { 201: RuleSchema, 409: problemResponses[400] },
  },
  'control',
);

/** A rule as stored, from what a request gave; a 400 when it has neither condition nor preset. */
function newRule(input: Omit<RuleInput, 'id'>, id: string): NewWatchRule {
  const condition = conditionOf(input);
  if (!condition) throw httpErrors.badRequest("body: a rule needs a 'condition' or a 'preset'");
  return {
    id,
    name: input.name,
    scope: input.scope ?? {},
    condition,
    webhooks: input.webhooks ?? [],
    enabled: input.enabled ?? true,
  };
}

/** The options of a rules or alerts route: under the alerts tag, answering problems, needing `scope`. */
function route<
  S extends {
    summary: string;
    params?: TSchema;
    querystring?: TSchema;
    body?: TSchema;
    response: Record<number, TSchema>;
  },
>(schema: S, scope: 'read' | 'control' = 'read') {
  return {
    config: { scope },
    schema: { ...schema, tags: ['alerts'], response: { ...schema.response, ...problemResponses } },
  };
}
