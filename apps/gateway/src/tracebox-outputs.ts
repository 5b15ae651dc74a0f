import type { Bus } from '@tracehub/bus';
import type { LinkAddress, Log } from '@tracehub/contracts';
import { RecordFeed } from '@tracehub/live';
import { TraceBoxCounters, type TraceBoxOption, TraceBoxOutput, takeTraceBoxOption } from '@tracehub/tracebox-output';

/** A link's trace box output option taken out of its address (`?tracebox=:7801`, STP and SWD links only). */
export function traceBoxOptionOf(link: LinkAddress, address: string): { address: string; traceBox?: TraceBoxOption } {
  const taken = takeTraceBoxOption(address);
  if (taken.traceBox && link.protocol === 'qs')
    throw new Error(`link ${link.rig}/${link.link}: tracebox= is for STP and SWD links (QS links have frontend=)`);
  return taken;
}

/**
 * The gateway's trace box outputs: one TCP port per link that asked for one, each fed by the
 * link's own live records, all numbered with the gateway's one pair of counters (marker index
 * and PhoNet transaction id), as one trace box numbers everything it sends.
 */
export class TraceBoxOutputs {
  readonly counters = new TraceBoxCounters();
  private readonly outputs: Array<{ feed: RecordFeed; output: TraceBoxOutput }> = [];

  constructor(private readonly bus: Bus) {}

  async open(
    link: LinkAddress,
    option: TraceBoxOption,
    settings: Record<string, unknown>,
    log: Log,
  ): Promise<TraceBoxOutput> {
    const feed = new RecordFeed(this.bus, log, link);
    const port = typeof settings.port === 'number' ? settings.port : undefined;
    const queue = { records: option.queueMessages ?? 10_000, bytes: 16 * 1024 * 1024 };
    const output = new TraceBoxOutput({ feed, link, counters: this.counters, port, queue, log });
    this.outputs.push({ feed, output });
    await output.listen(option.port, option.host);
    return output;
  }

  async close(): Promise<void> {
    for (const { feed, output } of this.outputs.splice(0)) {
      await output.close();
      feed.stop();
    }
  }
}
