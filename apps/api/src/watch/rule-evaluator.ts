import type { RuleCondition } from '@tracehub/api-contract';
import { RecordName, type TraceRecord } from '@tracehub/contracts';
import { countedRecords, describeCondition, type RuleDefinition, scopeMatcher } from './rule-definition.js';

/** A rule's alert on one link starting or ending. */
export interface AlertChange {
  state: 'firing' | 'resolved';
  rig: string;
  link: string;
  summary: string;
  /** The first matching record (firing, when a record caused it). */
  session: string | null;
  seq: number | null;
  /** When the cause happened (firing) or when the condition cleared (resolved), ms since the epoch. */
  atMs: number;
}

/** Where a link is, as storage has it: its latest session, open or ended. */
export interface LinkState {
  rig: string;
  link: string;
  protocol: string;
  session: string;
  startedMs: number;
  endedMs: number | null;
  /** Host time of its latest stored record (null: none yet). */
  lastRecordMs: number | null;
}

/** Records a batch brought, on one link (a live record batch, or a stored session's records). */
export interface LinkRecords {
  rig: string;
  link: string;
  protocol: string;
  session: string;
  records: readonly TraceRecord[];
}

/** Records storage refused (`record_losses`). */
export interface RefusedRecords {
  rig: string;
  link: string;
  protocol: string;
  session: string;
  seq: number | null;
  records: number;
  atMs: number;
}

interface Occurrence {
  ms: number;
  session: string | null;
  seq: number | null;
  weight: number;
}

/** What the evaluator knows of one link. */
interface LinkWatch {
  rig: string;
  link: string;
  firing: boolean;
  /** Occurrences within the window (record-borne conditions), oldest first, and their total weight. */
  window: Occurrence[];
  total: number;
  /** The link's session as last seen, whether it is open, and its latest record. */
  session: string | null;
  connected: boolean;
  endedMs: number | null;
  lastMs: number | null;
  lastSeq: number | null;
  /** The target build last seen on the link (target-info-change). */
  build: string | undefined;
}

export const hostMs = (r: TraceRecord): number => Number(BigInt(r.hostNs) / 1_000_000n);

/**
 * Judges one rule, link by link, from what it is told: records as they come, the links'
 * states as storage has them, refused records, and the clock (`tick`). Each call answers the
 * alerts that start or end with it. It keeps no time of its own: the live runner ticks it with
 * the wall clock, a backtest with the stored records' host times, so both judge alike.
 */
export class RuleEvaluator {
  private readonly links = new Map<string, LinkWatch>();
  private readonly inScope: (l: { rig: string; link: string; protocol: string }) => boolean;
  private readonly scopeCache = new Map<string, boolean>();
  private readonly counted: ((r: TraceRecord) => boolean) | undefined;
  private readonly condition: RuleCondition;
  private readonly threshold: number;
  private readonly windowMs: number;
  private readonly summary: string;

  constructor(readonly rule: RuleDefinition) {
    this.condition = rule.condition;
    this.inScope = scopeMatcher(rule.scope);
    this.counted = countedRecords(rule.condition);
    const c = rule.condition;
    this.threshold = 'count' in c ? (c.count ?? 1) : 1;
    this.windowMs = ('windowSeconds' in c ? (c.windowSeconds ?? 60) : 60) * 1000;
    this.summary = describeCondition(rule.condition);
  }

  /** Whether the rule learns anything from the links' stored states. */
  get watchesLinkStates(): boolean {
    return this.condition.kind === 'silent' || this.condition.kind === 'disconnected';
  }

  get watchesRefusals(): boolean {
    return this.condition.kind === 'records-refused';
  }

  /** Whether the rule looks at records at all (a batch from a link out of scope is skipped whole). */
  admits(link: { rig: string; link: string; protocol: string }): boolean {
    const key = `${link.protocol}/${link.rig}/${link.link}`;
    let yes = this.scopeCache.get(key);
    if (yes === undefined) {
      yes = this.inScope(link);
      this.scopeCache.set(key, yes);
    }
    return yes;
  }

  /** The links whose alert fires now. */
  firing(): { rig: string; link: string }[] {
    return [...this.links.values()].filter((w) => w.firing).map(({ rig, link }) => ({ rig, link }));
  }

  /** Goes on from alerts stored as firing (the rule changed hands, or its process restarted). */
  restore(
    alerts: ReadonlyArray<{ rig: string; link: string; causeMs: number; session: string | null; seq: number | null }>,
  ) {
    for (const a of alerts) {
      const w = this.watch(a.rig, a.link);
      w.firing = true;
      // The window as it was when the alert fired: it clears a window after its cause.
      w.window = [{ ms: a.causeMs, session: a.session, seq: a.seq, weight: this.threshold }];
      w.total = this.threshold;
    }
  }

  /** Previous target builds, per `rig/link` (target-info-change compares a new one with them). */
  seedBuilds(builds: ReadonlyMap<string, string>): void {
    for (const [key, build] of builds) {
      const [rig, link] = key.split('/');
      this.watch(rig, link).build = build;
    }
  }

  records(batch: LinkRecords): AlertChange[] {
    if (!this.admits(batch) || batch.records.length === 0) return [];
    const out: AlertChange[] = [];
    const w = this.watch(batch.rig, batch.link);
    const counted = this.counted;
    const kind = this.condition.kind;
    for (const r of batch.records) {
      const ms = hostMs(r);
      if (counted?.(r)) this.occur(w, { ms, session: r.session, seq: r.seq, weight: 1 }, out);
      else if (kind === 'target-info-change' && r.name === RecordName.QS_TARGET_INFO) {
        const build = typeof r.fields.build === 'string' ? r.fields.build : undefined;
        if (build !== undefined) {
          const before = w.build;
          w.build = build;
          if (before !== undefined && before !== build) {
            this.occur(w, { ms, session: r.session, seq: r.seq, weight: 1 }, out);
          }
        }
      }
    }
    const last = batch.records[batch.records.length - 1];
    const lastMs = hostMs(last);
    w.session = batch.session;
    w.connected = true;
    w.endedMs = null;
    // Records again: the link is neither silent nor disconnected.
    if (w.firing && (kind === 'silent' || kind === 'disconnected')) {
      this.resolve(w, hostMs(batch.records[0]), out);
    }
    if (w.lastMs === null || lastMs >= w.lastMs) {
      w.lastMs = lastMs;
      w.lastSeq = last.seq;
    }
    return out;
  }

  /** The links' states as stored (silent and disconnected rules). */
  linkStates(states: readonly LinkState[]): AlertChange[] {
    return this.perLink(states, this.watchesLinkStates, (s, w, out) => {
      // Storage may be behind the live records: a session older than the records seen is stale news.
      if (s.session !== w.session && w.lastMs !== null && s.startedMs < w.lastMs) return;
      const newSession = s.session !== w.session;
      w.session = s.session;
      w.connected = s.endedMs === null;
      w.endedMs = s.endedMs;
      const last = s.lastRecordMs ?? s.startedMs;
      if (newSession || w.lastMs === null || last > w.lastMs) {
        if (newSession) w.lastSeq = null;
        w.lastMs = newSession ? last : Math.max(w.lastMs ?? last, last);
      }
      if (!w.firing) return;
      if (this.condition.kind === 'silent' && !w.connected) this.resolve(w, s.endedMs ?? s.startedMs, out);
      if (this.condition.kind === 'disconnected' && w.connected) this.resolve(w, s.startedMs, out);
    });
  }

  refused(losses: readonly RefusedRecords[]): AlertChange[] {
    return this.perLink(losses, this.watchesRefusals, (l, w, out) =>
      this.occur(w, { ms: l.atMs, session: l.session, seq: l.seq, weight: l.records }, out),
    );
  }

  /** `visit` each item of a link in scope (none when the rule does not watch such items). */
  private perLink<T extends { rig: string; link: string; protocol: string }>(
    items: readonly T[],
    watched: boolean,
    visit: (item: T, w: LinkWatch, out: AlertChange[]) => void,
  ): AlertChange[] {
    const out: AlertChange[] = [];
    if (!watched) return out;
    for (const item of items) if (this.admits(item)) visit(item, this.watch(item.rig, item.link), out);
    return out;
  }

  /** The clock moved to `nowMs`: windows empty, silences grow long. */
  tick(nowMs: number): AlertChange[] {
    const out: AlertChange[] = [];
    const kind = this.condition.kind;
    for (const w of this.links.values()) {
      if (kind === 'silent') {
        const limitMs = this.condition.seconds * 1000;
        if (!w.firing && w.connected && w.lastMs !== null && nowMs - w.lastMs >= limitMs) {
          this.fire(w, { ms: w.lastMs + limitMs, session: w.session, seq: w.lastSeq, weight: 1 }, out);
        }
      } else if (kind === 'disconnected') {
        const limitMs = this.condition.seconds * 1000;
        if (!w.firing && !w.connected && w.endedMs !== null && nowMs - w.endedMs >= limitMs) {
          this.fire(w, { ms: w.endedMs + limitMs, session: w.session, seq: null, weight: 1 }, out);
        }
      } else {
        this.expire(w, nowMs, out);
      }
    }
    return out;
  }

  private occur(w: LinkWatch, o: Occurrence, out: AlertChange[]): void {
    this.expire(w, o.ms, out);
    w.window.push(o);
    w.total += o.weight;
    if (!w.firing && w.total >= this.threshold) this.fire(w, w.window[0], out);
  }

  /** Drops what has left the window by `nowMs`; the alert resolves when too few remain. */
  private expire(w: LinkWatch, nowMs: number, out: AlertChange[]): void {
    while (w.window.length > 0 && w.window[0].ms <= nowMs - this.windowMs) {
      const gone = w.window.shift() as Occurrence;
      w.total -= gone.weight;
      if (w.firing && w.total < this.threshold) this.resolve(w, gone.ms + this.windowMs, out);
    }
  }

  private fire(w: LinkWatch, cause: Occurrence, out: AlertChange[]): void {
    w.firing = true;
    out.push(this.change(w, 'firing', cause.ms, cause));
  }

  private resolve(w: LinkWatch, atMs: number, out: AlertChange[]): void {
    w.firing = false;
    out.push(this.change(w, 'resolved', atMs));
  }

  private change(w: LinkWatch, state: AlertChange['state'], atMs: number, cause?: Occurrence): AlertChange {
    const { rig, link } = w;
    return { state, rig, link, summary: this.summary, session: cause?.session ?? null, seq: cause?.seq ?? null, atMs };
  }

  private watch(rig: string, link: string): LinkWatch {
    const key = `${rig}/${link}`;
    let w = this.links.get(key);
    if (!w) {
      w = {
        rig,
        link,
        firing: false,
        window: [],
        total: 0,
        session: null,
        connected: false,
        endedMs: null,
        lastMs: null,
        lastSeq: null,
        build: undefined,
      };
      this.links.set(key, w);
    }
    return w;
  }
}
