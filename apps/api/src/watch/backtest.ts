import type { BacktestResult } from '@tracehub/api-contract';
import { type Database, latestTargetBuilds, rowToTraceRecord, sessionRecords } from '@tracehub/db';
import type { Kysely } from 'kysely';
import type { RuleDefinition } from './rule-definition.js';
import { type AlertChange, hostMs, RuleEvaluator } from './rule-evaluator.js';

type BacktestAlert = BacktestResult['alerts'][number];

/**
 * What a rule would have fired over stored history from `fromMs` to `toMs`: each link in
 * its scope replayed session by session through the same evaluator the live runner uses,
 * its clock moved by the records' host times and the sessions' starts and ends.
 */
export async function backtestRule(
  db: Kysely<Database>,
  rule: RuleDefinition,
  fromMs: number,
  toMs: number,
): Promise<BacktestResult> {
  const from = new Date(fromMs);
  const to = new Date(toMs);
  const sessions = await db
    .selectFrom('sessions')
    .select(['id', 'rig', 'link', 'protocol', 'started_at', 'ended_at'])
    .where('started_at', '<', to)
    .where((w) => w.or([w('ended_at', 'is', null), w('ended_at', '>=', from)]))
    .orderBy('rig')
    .orderBy('link')
    .orderBy('started_at')
    .execute();
  const byLink = new Map<string, typeof sessions>();
  const probe = new RuleEvaluator(rule);
  for (const s of sessions) {
    if (!probe.admits(s)) continue;
    const key = `${s.rig}/${s.link}`;
    byLink.set(key, [...(byLink.get(key) ?? []), s]);
  }
  const builds = rule.condition.kind === 'target-info-change' ? await latestTargetBuilds(db, from) : new Map();
  const alerts: BacktestAlert[] = [];
  let records = 0;
  let sessionCount = 0;
  const endMs = Math.min(toMs, Date.now());
  for (const [key, linkSessions] of byLink) {
    const evaluator = new RuleEvaluator(rule);
    const known = builds.get(key);
    if (known !== undefined) evaluator.seedBuilds(new Map([[key, known]]));
    const open = new Map<string, BacktestAlert>();
    const take = (changes: AlertChange[]) => {
      for (const c of changes) collect(c, open, alerts);
    };
    for (const s of linkSessions) {
      sessionCount++;
      const startedMs = s.started_at.getTime();
      const endedMs = s.ended_at?.getTime() ?? null;
      const state = { rig: s.rig, link: s.link, protocol: s.protocol, session: s.id, startedMs, lastRecordMs: null };
      take(evaluator.tick(Math.max(startedMs, fromMs)));
      take(evaluator.linkStates([{ ...state, endedMs: null }]));
      for await (const row of sessionRecords(db, s.id)) {
        const record = rowToTraceRecord(row);
        const ms = hostMs(record);
        if (ms < fromMs) continue;
        if (ms >= toMs) break;
        records++;
        take(evaluator.tick(ms));
        take(evaluator.records({ rig: s.rig, link: s.link, protocol: s.protocol, session: s.id, records: [record] }));
      }
      if (endedMs !== null && endedMs < endMs) {
        take(evaluator.tick(endedMs));
        take(evaluator.linkStates([{ ...state, endedMs }]));
      }
    }
    take(evaluator.tick(endMs));
  }
  alerts.sort((a, b) => a.at.localeCompare(b.at) || a.rig.localeCompare(b.rig) || a.link.localeCompare(b.link));
  return {
    rule: rule.id,
    from: from.toISOString(),
    to: to.toISOString(),
    sessions: sessionCount,
    records,
    alerts,
  };
}

function collect(change: AlertChange, open: Map<string, BacktestAlert>, alerts: BacktestAlert[]): void {
  const key = `${change.rig}/${change.link}`;
  if (change.state === 'firing') {
    const alert: BacktestAlert = {
      rig: change.rig,
      link: change.link,
      session: change.session,
      seq: change.seq,
      at: new Date(change.atMs).toISOString(),
      resolvedAt: null,
      summary: change.summary,
    };
    open.set(key, alert);
    alerts.push(alert);
  } else {
    const alert = open.get(key);
    if (alert) alert.resolvedAt = new Date(change.atMs).toISOString();
    open.delete(key);
  }
}
