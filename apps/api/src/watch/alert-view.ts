import type { Alert, Rule, WebhookTarget } from '@tracehub/api-contract';
import type { AlertRow, SharedWatchRule, WatchRuleRow } from '@tracehub/db';
import type { AlertNotice } from './webhooks.js';

/**
 * The dashboard at an alert's moment: its session at the first matching record, or the link's
 * sessions when no record caused it. `base` is the dashboard's address ('' for a path).
 */
export function alertDashboardUrl(base: string, alert: Pick<AlertRow, 'session' | 'seq' | 'rig' | 'link'>): string {
  const root = base.replace(/\/+$/, '');
  if (alert.session !== null)
    return `${root}${sessionRecordHash(alert.session, alert.seq === null ? null : Number(alert.seq))}`;
  return `${root}/#/sessions?rig=${encodeURIComponent(alert.rig)}&link=${encodeURIComponent(alert.link)}`;
}

/**
 * A session's page at one record: `seq` names it, `after` opens the sequence diagram with it
 * as the first step.
 */
export function sessionRecordHash(session: string, seq: number | null): string {
  const at = seq === null ? '' : `?seq=${seq}&after=${seq - 1}`;
  return `/#/session/${encodeURIComponent(session)}${at}`;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function alertOf(row: AlertRow & { rule_name: string }, dashboardBase: string): Alert {
  return {
    id: Number(row.id),
    rule: row.rule_id,
    ruleName: row.rule_name,
    rig: row.rig,
    link: row.link,
    state: row.state,
    summary: row.summary,
    session: row.session,
    seq: row.seq === null ? null : Number(row.seq),
    at: row.cause_at.toISOString(),
    firedAt: row.fired_at.toISOString(),
    resolvedAt: iso(row.resolved_at),
    acknowledgedAt: iso(row.acknowledged_at),
    acknowledgedBy: row.acknowledged_by,
    dashboardUrl: alertDashboardUrl(dashboardBase, row),
  };
}

/**
 * A webhook's address as read scope sees it: its origin only. Chat and incident services keep
 * the credential in the path or query (`https://hooks.slack.com/services/T/B/<secret>`), and a
 * URL may carry a user and password; all of that is left out.
 */
export function maskedWebhookUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '';
    return `${parsed.protocol}//${parsed.host}/${hidden ? '***' : ''}`;
  } catch {
    return '***';
  }
}

/**
 * A rule as the API shows it: webhooks without their signing secrets, and, unless `fullUrls`
 * (control scope, which may change them anyway), with their addresses masked.
 */
export function ruleOf(row: SharedWatchRule, fullUrls = false): Rule {
  const webhooks = row.webhooks as unknown as WebhookTarget[];
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    condition: row.condition as unknown as Rule['condition'],
    webhooks: webhooks.map((w) => ({
      url: fullUrls ? w.url : maskedWebhookUrl(w.url),
      signed: w.secret !== undefined,
      timeoutMs: w.timeoutMs ?? 5000,
      retries: w.retries ?? 4,
    })),
    enabled: row.enabled,
    silencedUntil: iso(row.silenced_until),
    createdAt: row.created_at.toISOString(),
    evaluatedBy: row.evaluatedBy,
    firing: row.firing,
  };
}

/**
 * The notice of an alert's state change: a line of text for chat webhooks, the details for the
 * rest (the alert as the API shows it, less its rule and acknowledgement). `note` says why,
 * when the condition is not what changed it (`rule disabled`).
 */
export function alertNotice(rule: WatchRuleRow, alert: AlertRow, dashboardBase: string, note?: string): AlertNotice {
  const { id, rig, link, summary, session, seq, at, firedAt, resolvedAt, dashboardUrl } = alertOf(
    { ...alert, rule_name: rule.name },
    dashboardBase,
  );
  const record = session !== null ? ` (session ${session}${seq !== null ? `, seq ${seq}` : ''})` : '';
  const text =
    alert.state === 'firing'
      ? `[FIRING] ${rule.name} on ${rig}/${link}: ${summary}${record} ${dashboardUrl}`
      : `[RESOLVED] ${rule.name} on ${rig}/${link}: ${summary}${note ? ` (${note})` : ''} ${dashboardUrl}`;
  return {
    state: alert.state,
    text,
    rule: { id: rule.id, name: rule.name },
    alert: { id, rig, link, summary, session, seq, at, firedAt, resolvedAt, dashboardUrl },
  };
}
