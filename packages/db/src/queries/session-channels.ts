import type { TraceRecord } from '@tracehub/contracts';
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { ScanBudget } from './block-reader.js';
import { forEachSessionRecord } from './session-blocks.js';

/** What one STP channel of a master carried in a session. */
export interface ChannelCounts {
  channel: number;
  records: number;
  errors: number;
  /** Host receive time of the channel's first and last record, ns since the epoch. */
  firstHostNs: string;
  lastHostNs: string;
  /** The record names seen on the channel, sorted. */
  names: string[];
}

/** One STP master: its totals and its channels, by channel number. */
export interface MasterCounts {
  master: number;
  records: number;
  errors: number;
  channels: ChannelCounts[];
}

/** A session's records by STP master and channel, and its error records by name. */
export interface SessionChannels {
  /** Every record of the session, addressed or not. */
  records: number;
  /** Records on no master/channel: markers, and errors of the stream itself (bytes skipped, ...). */
  unaddressed: number;
  masters: MasterCounts[];
  /** The session's error records, on a channel or not, by name: most frequent first. */
  errors: Array<{ name: string; count: number }>;
}

export interface SessionChannelsOptions {
  /** What the query may read (default: `ScanBudget`'s default); over it, `ScanLimitError`. */
  budget?: ScanBudget;
}

/** Host times are decimal ns without leading zeros: the shorter is the earlier, then text order is number order. */
const isEarlier = (a: string, b: string) => (a.length !== b.length ? a.length < b.length : a < b);

interface ChannelTally {
  master: number;
  channel: number;
  records: number;
  errors: number;
  firstHostNs: string;
  lastHostNs: string;
  names: Set<string>;
}

/** A session's records counted as they are read: per channel, per error name, and in all. */
class ChannelsTally {
  private records = 0;
  private unaddressed = 0;
  /** By `master/channel`. */
  private readonly channels = new Map<string, ChannelTally>();
  private readonly errors = new Map<string, number>();

  count(r: TraceRecord): void {
    this.records++;
    const isError = r.kind === 'error';
    if (isError) this.errors.set(r.name, (this.errors.get(r.name) ?? 0) + 1);
    if (!r.stp) {
      this.unaddressed++;
      return;
    }
    const key = `${r.stp.master}/${r.stp.channel}`;
    let t = this.channels.get(key);
    if (!t) {
      t = {
        master: r.stp.master,
        channel: r.stp.channel,
        records: 0,
        errors: 0,
        firstHostNs: r.hostNs,
        lastHostNs: r.hostNs,
        names: new Set(),
      };
      this.channels.set(key, t);
    }
    t.records++;
    if (isError) t.errors++;
    if (isEarlier(r.hostNs, t.firstHostNs)) t.firstHostNs = r.hostNs;
    if (isEarlier(t.lastHostNs, r.hostNs)) t.lastHostNs = r.hostNs;
    t.names.add(r.name);
  }

  result(): SessionChannels {
    return {
      records: this.records,
      unaddressed: this.unaddressed,
      masters: mastersOf([...this.channels.values()]),
      errors: [...this.errors]
        .map(([name, n]) => ({ name, count: n }))
        .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1)),
    };
  }
}

/**
 * Counts a session's records per STP master and channel (records, errors, host-time span,
 * names) and its error records per name. Block summaries name the channels a block holds but
 * not how many records each has, so every block is decoded: a budget bounds the work, and the
 * blocks are read a few at a time on one snapshot, so a compaction meanwhile neither doubles
 * nor drops records.
 */
export async function sessionChannels(
  db: Kysely<Database>,
  session: string,
  opts: SessionChannelsOptions = {},
): Promise<SessionChannels> {
  const tally = new ChannelsTally();
  await forEachSessionRecord(db, session, opts.budget ?? new ScanBudget(), (r) => tally.count(r));
  return tally.result();
}

/** Channel tallies grouped by master, both in number order. */
function mastersOf(tallies: ChannelTally[]): MasterCounts[] {
  const masters = new Map<number, MasterCounts>();
  tallies.sort((a, b) => a.master - b.master || a.channel - b.channel);
  for (const t of tallies) {
    let m = masters.get(t.master);
    if (!m) masters.set(t.master, (m = { master: t.master, records: 0, errors: 0, channels: [] }));
    m.records += t.records;
    m.errors += t.errors;
    m.channels.push({
      channel: t.channel,
      records: t.records,
      errors: t.errors,
      firstHostNs: t.firstHostNs,
      lastHostNs: t.lastHostNs,
      names: [...t.names].sort(),
    });
  }
  return [...masters.values()];
}
