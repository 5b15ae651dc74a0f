import type { RuleCondition, RuleScope, WebhookTarget } from '@tracehub/api-contract';
import { type Log, type RecordBatch, RepeatedErrorLog } from '@tracehub/contracts';
import {
  type AlertRow,
  claimWatchRules,
  countWatchRules,
  type Database,
  fireAlert,
  firingAlertsOf,
  heartbeatApiReplica,
  latestLinkSessions,
  latestTargetBuilds,
  listWatchRules,
  recordsRefusedSince,
  releaseWatchRules,
  renewWatchRuleLeases,
  resolveAlert,
  resolveRuleAlerts,
  type WatchRuleRow,
} from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import type { Kysely } from 'kysely';
import { alertNotice } from './alert-view.js';
import type { RuleDefinition } from './rule-definition.js';
import { type AlertChange, RuleEvaluator } from './rule-evaluator.js';
import type { WebhookSender } from './webhooks.js';

export interface RuleRunnerSettings {
  /** How long a process holds a rule without renewing it, ms. */
  leaseMs: number;
  /** How often the clock-driven conditions (silence, windows) are judged, ms. */
  tickMs: number;
  /** The dashboard's address for links in notices (empty: a path from the API's origin). */
  dashboardUrl: string;
}

interface ServedRule {
  row: WatchRuleRow;
  /** The definition the evaluator was made from (a changed rule gets a new one). */
  definition: string;
  evaluator: RuleEvaluator;
}

const definitionOf = (row: WatchRuleRow) => JSON.stringify([row.name, row.scope, row.condition, row.enabled]);

export function ruleDefinitionOf(row: WatchRuleRow): RuleDefinition {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope as RuleScope,
    condition: row.condition as unknown as RuleCondition,
  };
}

/**
 * Evaluates this process's share of the watch rules on the live record feed. Rules live in
 * Postgres and are leased as the Reporter endpoints are: every process receives every live
 * record, but only the holder of a rule's lease judges it, so each rule fires once however
 * many API processes run. A process that cannot renew in time stops judging before its lease
 * can run out; the next holder goes on from the alerts stored as firing. Each state change is
 * stored first, then told to the rule's webhooks: the insert that refuses a second firing
 * alert of a rule on a link is what keeps a notice single.
 */
export class RuleRunner {
  private readonly served = new Map<string, ServedRule>();
  private removeConsumer: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  /** Alert changes waiting to be stored and told, in the order they happened. */
  private changes: Promise<void> = Promise.resolve();
  private validUntil = 0;
  private lastLeaseTick = 0;
  private refusedSince = new Date();
  private running = false;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      feed: RecordFeed;
      webhooks: WebhookSender;
      log: Log;
      replicaId: string;
      settings: RuleRunnerSettings;
    },
  ) {
    this.pollFailures = new RepeatedErrorLog(
      deps.log,
      'reading link states for the watch rules (tried again each tick)',
    );
    this.leaseFailures = new RepeatedErrorLog(deps.log, 'renewing the watch rule leases (tried again each tick)');
  }

  /** Each tick fails the same way while Postgres is away: logged when it starts, counted, and when it works again. */
  private readonly pollFailures: RepeatedErrorLog;
  private readonly leaseFailures: RepeatedErrorLog;

  get replicaId(): string {
    return this.deps.replicaId;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.leaseTick();
    // The next tick is timed from the end of the last: a slow database never piles ticks up.
    const next = () => {
      if (!this.running) return;
      this.timer = setTimeout(() => {
        this.ticking = this.tick().finally(next);
      }, this.deps.settings.tickMs);
    };
    next();
    await this.deps.feed.flush();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await this.changes;
    this.served.clear();
    this.followFeed();
    await releaseWatchRules(this.deps.db, this.replicaId).catch(() => {});
  }

  /** Resolves once the alert changes seen so far are stored and their notices handed over (tests). */
  async idle(): Promise<void> {
    await this.ticking;
    await this.changes;
  }

  /** The rules judged here. */
  servedIds(): string[] {
    return [...this.served.keys()];
  }

  /** Starts judging a rule this process has just added (and holds): it applies from now on. */
  async adopt(row: WatchRuleRow): Promise<void> {
    await this.serve(row);
  }

  /** A rule changed here: judged anew at once when this process judges it (else by its judge at its next renewal). */
  async reload(row: WatchRuleRow): Promise<void> {
    const served = this.served.get(row.id);
    if (served && definitionOf(row) !== served.definition) await this.serve(row);
  }

  /**
   * A rule disabled (or about to be removed) here: its firing alerts are resolved and each
   * resolution told to its webhooks (unless it is silenced), noting why. Queued behind the
   * changes being stored, so a firing stored meanwhile is resolved too; once the rule is
   * disabled no process stores a firing of it (`fireAlert` asks), whichever judges it.
   */
  async retire(row: WatchRuleRow, why: 'disabled' | 'removed'): Promise<void> {
    const done = this.changes.then(async () => {
      for (const alert of await resolveRuleAlerts(this.deps.db, row.id)) {
        this.deps.log.info(
          { rule: row.id, alert: Number(alert.id), rig: alert.rig, link: alert.link, state: alert.state },
          `alert resolved: ${row.name} on ${alert.rig}/${alert.link} (rule ${why})`,
        );
        this.notify(row, alert, `rule ${why}`);
      }
    });
    this.changes = done.catch(() => {});
    await done;
  }

  /** Forgets a rule removed here (its owner, if another process, forgets it at its next renewal). */
  forget(id: string): void {
    this.served.delete(id);
    this.followFeed();
  }

  /**
   * Takes live records only while this process judges a rule: the feed's subscription to
   * every record stays closed in a process that has none (the live tail may still open it).
   */
  private followFeed(): void {
    if (this.served.size > 0 && this.running) {
      this.removeConsumer ??= this.deps.feed.add((batch) => this.onBatch(batch));
    } else {
      this.removeConsumer?.();
      this.removeConsumer = undefined;
    }
  }

  private onBatch(batch: RecordBatch): void {
    for (const [id, rule] of this.served) {
      if (!rule.row.enabled || !rule.evaluator.admits(batch)) continue;
      this.queue(id, rule.evaluator.records(batch));
    }
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    const now = Date.now();
    if (now - this.lastLeaseTick >= this.deps.settings.leaseMs / 5) await this.leaseTick();
    try {
      await this.pollStorage();
      this.pollFailures.succeeded();
    } catch (err) {
      this.pollFailures.failed(err);
    }
    for (const [id, rule] of this.served) if (rule.row.enabled) this.queue(id, rule.evaluator.tick(Date.now()));
  }

  /** What storage knows that the live records do not tell: sessions ended, records refused. */
  private async pollStorage(): Promise<void> {
    const rules = [...this.served.entries()].filter(([, r]) => r.row.enabled);
    const { db } = this.deps;
    if (rules.some(([, r]) => r.evaluator.watchesLinkStates)) {
      const states = await latestLinkSessions(db);
      for (const [id, r] of rules) this.queue(id, r.evaluator.linkStates(states));
    }
    if (rules.some(([, r]) => r.evaluator.watchesRefusals)) {
      const losses = await recordsRefusedSince(db, this.refusedSince);
      if (losses.length > 0) this.refusedSince = losses[losses.length - 1].lost_at;
      const refused = losses.map((l) => ({
        rig: l.rig,
        link: l.link,
        protocol: l.protocol,
        session: l.session,
        seq: l.first_seq === null ? null : Number(l.first_seq),
        records: l.records,
        atMs: l.lost_at.getTime(),
      }));
      for (const [id, r] of rules) this.queue(id, r.evaluator.refused(refused));
    }
  }

  /** Renews, drops what is no longer ours (or changed), takes our share of the rules nobody judges. */
  private async leaseTick(): Promise<void> {
    if (!this.running) return;
    const { db, log, settings } = this.deps;
    const sent = performance.now();
    this.lastLeaseTick = Date.now();
    try {
      const { replicas } = await heartbeatApiReplica(db, this.replicaId, settings.leaseMs);
      const mine = new Map(
        (await renewWatchRuleLeases(db, this.replicaId, settings.leaseMs, [...this.served.keys()])).map((r) => [
          r.id,
          r,
        ]),
      );
      this.validUntil = sent + settings.leaseMs;
      for (const [id, rule] of this.served) {
        const row = mine.get(id);
        if (!row) {
          this.served.delete(id);
          log.info({ rule: id }, 'watch rule removed, or judged by another process now; stopped here');
        } else if (definitionOf(row) !== rule.definition) {
          await this.serve(row);
          log.info({ rule: id }, 'watch rule changed; judged anew from now on');
        } else {
          rule.row = row;
        }
      }
      const share = Math.ceil((await countWatchRules(db)) / replicas);
      for (const row of await claimWatchRules(db, this.replicaId, settings.leaseMs, share - this.served.size, [
        ...this.served.keys(),
      ])) {
        await this.serve(row);
        log.info({ rule: row.id, replicas }, 'watch rule taken over');
      }
      this.leaseFailures.succeeded();
    } catch (err) {
      this.leaseFailures.failed(err);
    }
    // Not renewed for most of a lease: another process may take the rules soon. Stop first,
    // so that no rule is ever judged by two processes.
    if (performance.now() > this.validUntil - settings.leaseMs / 5 && this.served.size > 0) {
      log.warn({ rules: [...this.served.keys()] }, 'watch rule leases not renewed in time; leaving them to others');
      this.served.clear();
    }
    this.followFeed();
  }

  /** Starts judging a rule held here, going on from its alerts stored as firing. */
  private async serve(row: WatchRuleRow): Promise<void> {
    const evaluator = new RuleEvaluator(ruleDefinitionOf(row));
    const { db } = this.deps;
    const firing = await firingAlertsOf(db, row.id);
    evaluator.restore(
      firing.map((a) => ({
        rig: a.rig,
        link: a.link,
        causeMs: a.cause_at.getTime(),
        session: a.session,
        seq: a.seq === null ? null : Number(a.seq),
      })),
    );
    if ((row.condition as { kind?: string }).kind === 'target-info-change') {
      evaluator.seedBuilds(await latestTargetBuilds(db));
    }
    this.served.set(row.id, { row, definition: definitionOf(row), evaluator });
    this.followFeed();
  }

  private queue(ruleId: string, changes: AlertChange[]): void {
    if (changes.length === 0) return;
    this.changes = this.changes.then(async () => {
      for (const change of changes) {
        try {
          await this.apply(ruleId, change);
        } catch (err) {
          this.deps.log.warn({ err, rule: ruleId, change }, 'could not store an alert change');
        }
      }
    });
  }

  /** Stores a change; tells the rule's webhooks when it was stored here (not already by another). */
  private async apply(ruleId: string, change: AlertChange): Promise<void> {
    const rule = this.served.get(ruleId);
    if (!rule) return;
    const { db, log } = this.deps;
    let row: AlertRow | undefined;
    if (change.state === 'firing') {
      row = await fireAlert(db, {
        ruleId,
        rig: change.rig,
        link: change.link,
        summary: change.summary,
        session: change.session,
        seq: change.seq,
        causeAt: new Date(change.atMs),
      });
    } else {
      row = await resolveAlert(db, { ruleId, rig: change.rig, link: change.link });
    }
    if (!row) return;
    log.info(
      { rule: ruleId, alert: Number(row.id), rig: row.rig, link: row.link, state: row.state },
      `alert ${row.state}: ${rule.row.name} on ${row.rig}/${row.link}`,
    );
    // The rule as stored now: a silence or new webhooks apply from the next change on.
    const [now] = await listWatchRules(db, ruleId);
    if (now) this.notify(now, row);
  }

  /** Tells the rule's webhooks of an alert's change, unless the rule is silenced. */
  private notify(rule: WatchRuleRow, alert: AlertRow, note?: string): void {
    const silenced = rule.silenced_until !== null && rule.silenced_until.getTime() > Date.now();
    const targets = rule.webhooks as unknown as WebhookTarget[];
    if (silenced || targets.length === 0) return;
    this.deps.webhooks.send(targets, alertNotice(rule, alert, this.deps.settings.dashboardUrl, note));
  }
}
