import type { RuleCondition, RuleScope, WebhookTarget } from '@tracehub/api-contract';
import type { createDb } from '@tracehub/db';
import type { Command } from 'commander';
import { addConnectionOptions } from './connections.js';
import { cannotQuery, withDatabase } from './database.js';

interface DbOptions {
  databaseUrl: string;
  json?: boolean;
}

interface AddOptions extends DbOptions {
  name: string;
  id?: string;
  preset?: string;
  condition?: string;
  rigs?: string;
  links?: string;
  protocols?: string;
  webhook?: string[];
  webhookSecret?: string;
}

const list = (text: string | undefined) =>
  text
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** A subcommand about one rule or alert (`<id>`), with the database options. */
function oneCommand(parent: Command, name: string, description: string, what: string): Command {
  return addConnectionOptions(parent.command(name).description(description).argument('<id>', what), { db: true });
}

/** Runs a change of one row; an error saying `missing` when there was no such row, else prints `done`. */
async function changeOne(
  databaseUrl: string,
  change: (db: ReturnType<typeof createDb>) => Promise<unknown>,
  missing: string,
  done: () => string,
): Promise<void> {
  await withDatabase(databaseUrl, 'rules', async (db) => {
    const changed = await change(db).catch((err: Error) => {
      throw cannotQuery(databaseUrl, err);
    });
    if (!changed) throw new Error(missing);
    process.stdout.write(`${done()}\n`);
  });
}

/** A rule's condition from `--preset` or `--condition` JSON, checked against the API's own schema. */
async function conditionFrom(opts: AddOptions): Promise<RuleCondition> {
  const { RULE_PRESETS, RuleConditionSchema, replyProblems } = await import('@tracehub/api-contract');
  if ((opts.preset === undefined) === (opts.condition === undefined)) {
    throw new Error('give a rule either --preset or --condition (not both)');
  }
  if (opts.preset !== undefined) {
    const preset = (RULE_PRESETS as Record<string, RuleCondition>)[opts.preset];
    if (!preset) throw new Error(`--preset: one of ${Object.keys(RULE_PRESETS).join(', ')}`);
    return preset;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(opts.condition as string);
  } catch (err) {
    throw new Error(`--condition is not JSON: ${(err as Error).message}`);
  }
  const [first] = replyProblems(RuleConditionSchema, parsed, 1);
  if (first) throw new Error(`--condition ${first}`);
  return parsed as RuleCondition;
}

/**
 * `tracehub rules list|add|remove|silence`: the watch rules the API processes judge on the
 * live records, kept in Postgres. A rule added here is taken up by an API process within a
 * fifth of its lease (`WATCH_LEASE_MS`). Backtests run in the API (`POST /rules/{id}/backtest`).
 */
export function registerRules(program: Command): void {
  const rules = program.command('rules').description('watch rules: list, add, remove, silence');

  const listCmd = rules
    .command('list')
    .description('every rule, with the API process judging it and its firing alerts');
  listCmd.option('--json', 'one JSON object per line');
  addConnectionOptions(listCmd, { db: true });
  listCmd.action(async (opts: DbOptions) => {
    const { listWatchRules } = await import('@tracehub/db');
    await withDatabase(opts.databaseUrl, 'rules', async (db) => {
      const rows = await listWatchRules(db).catch((err: Error) => {
        throw cannotQuery(opts.databaseUrl, err);
      });
      for (const r of rows) {
        const silenced =
          r.silenced_until && r.silenced_until > new Date() ? ` silenced until ${r.silenced_until.toISOString()}` : '';
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ id: r.id, name: r.name, scope: r.scope, condition: r.condition, enabled: r.enabled, firing: r.firing, evaluatedBy: r.evaluatedBy })}\n`
            : `${r.id}\t${r.name}\t${JSON.stringify(r.condition)}\tscope ${JSON.stringify(r.scope)}\tfiring ${r.firing}${silenced}\n`,
        );
      }
    });
  });

  const addCmd = rules
    .command('add')
    .description('add a rule (it applies to live records from when an API process takes it up)')
    .requiredOption('--name <name>', 'what the rule is called in alerts')
    .option('--id <id>', 'its id (default: rule-<random>)')
    .option('--preset <preset>', 'a ready-made condition: qs-assert, stp-errors')
    .option('--condition <json>', 'the condition as the API takes it, e.g. \'{"kind":"silent","seconds":30}\'')
    .option('--rigs <globs>', 'comma-separated rig globs (default: every rig)')
    .option('--links <globs>', 'comma-separated link globs')
    .option('--protocols <list>', 'comma-separated protocols: qs, stp, swd')
    .option('--webhook <url...>', 'webhooks told of each state change')
    .option('--webhook-secret <secret>', 'signs the webhook bodies (X-Tracehub-Signature)');
  addConnectionOptions(addCmd, { db: true });
  addCmd.action(async (opts: AddOptions) => {
    const condition = await conditionFrom(opts);
    const scope: RuleScope = {
      ...(opts.rigs ? { rigs: list(opts.rigs) } : {}),
      ...(opts.links ? { links: list(opts.links) } : {}),
      ...(opts.protocols ? { protocols: list(opts.protocols) as RuleScope['protocols'] } : {}),
    };
    const webhooks: WebhookTarget[] = (opts.webhook ?? []).map((url) => {
      if (!/^https?:\/\//.test(url)) throw new Error(`--webhook ${url}: an http(s) URL`);
      return { url, ...(opts.webhookSecret ? { secret: opts.webhookSecret } : {}) };
    });
    const id = opts.id ?? `rule-${Math.random().toString(16).slice(2, 10)}`;
    const { insertWatchRule } = await import('@tracehub/db');
    await withDatabase(opts.databaseUrl, 'rules', async (db) => {
      const added = await insertWatchRule(db, { id, name: opts.name, scope, condition, webhooks, enabled: true }).catch(
        (err: Error) => {
          throw cannotQuery(opts.databaseUrl, err);
        },
      );
      if (!added) throw new Error(`a watch rule named ${id} exists already`);
      process.stdout.write(`${id}\n`);
    });
  });

  oneCommand(rules, 'remove', 'remove a rule and its alerts', 'the rule').action(
    async (id: string, opts: DbOptions) => {
      const { deleteWatchRule } = await import('@tracehub/db');
      await changeOne(
        opts.databaseUrl,
        (db) => deleteWatchRule(db, id),
        `no watch rule ${id}`,
        () => `removed ${id}`,
      );
    },
  );

  oneCommand(rules, 'silence', 'silence a rule for a time: its alerts are kept, its webhooks not told', 'the rule')
    .requiredOption('--for <seconds>', 'how long (0 ends the silence)')
    .action(async (id: string, opts: DbOptions & { for: string }) => {
      const seconds = Number(opts.for);
      if (!Number.isInteger(seconds) || seconds < 0) throw new Error('--for: whole seconds, 0 or more');
      const { silenceWatchRule } = await import('@tracehub/db');
      const until = seconds === 0 ? null : new Date(Date.now() + seconds * 1000);
      await changeOne(
        opts.databaseUrl,
        (db) => silenceWatchRule(db, id, until),
        `no watch rule ${id}`,
        () => (until ? `${id} silenced until ${until.toISOString()}` : `${id} no longer silenced`),
      );
    });
}

/** `tracehub alerts list|ack`: what the rules fired. */
export function registerAlerts(program: Command): void {
  const alerts = program.command('alerts').description('alerts the watch rules raised: list, acknowledge');

  const listCmd = alerts
    .command('list')
    .description('alerts, newest first')
    .option('--firing', 'only those firing now')
    .option('--rule <id>', "only this rule's")
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'one JSON object per line');
  addConnectionOptions(listCmd, { db: true });
  listCmd.action(async (opts: DbOptions & { firing?: boolean; rule?: string; limit: string }) => {
    const limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new Error('--limit: a whole number, 1 or more');
    const { listAlerts } = await import('@tracehub/db');
    await withDatabase(opts.databaseUrl, 'alerts', async (db) => {
      const rows = await listAlerts(db, {
        limit,
        ...(opts.firing ? { state: 'firing' } : {}),
        ...(opts.rule ? { rule: opts.rule } : {}),
      }).catch((err: Error) => {
        throw cannotQuery(opts.databaseUrl, err);
      });
      for (const a of rows) {
        const record = a.session === null ? '' : `\t${a.session}${a.seq === null ? '' : `#${a.seq}`}`;
        const acked = a.acknowledged_by ? `\tacknowledged by ${a.acknowledged_by}` : '';
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ id: Number(a.id), rule: a.rule_id, ruleName: a.rule_name, rig: a.rig, link: a.link, state: a.state, summary: a.summary, session: a.session, seq: a.seq === null ? null : Number(a.seq), at: a.cause_at, firedAt: a.fired_at, resolvedAt: a.resolved_at, acknowledgedBy: a.acknowledged_by })}\n`
            : `${a.id}\t${a.state}\t${a.rule_name}\t${a.rig}/${a.link}\t${a.cause_at.toISOString()}${record}\t${a.summary}${acked}\n`,
        );
      }
    });
  });

  oneCommand(alerts, 'ack', 'acknowledge an alert (someone is on it)', 'the alert')
    .requiredOption('--by <name>', 'who')
    .action(async (id: string, opts: DbOptions & { by: string }) => {
      const n = Number(id);
      if (!Number.isInteger(n) || n < 1) throw new Error(`<id>: an alert number, not ${id}`);
      const { acknowledgeAlert } = await import('@tracehub/db');
      await changeOne(
        opts.databaseUrl,
        (db) => acknowledgeAlert(db, n, opts.by),
        `no alert ${n}`,
        () => `alert ${n} acknowledged by ${opts.by}`,
      );
    });
}
