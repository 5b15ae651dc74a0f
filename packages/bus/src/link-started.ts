import type { LinkAddress, Protocol } from '@tracehub/contracts';
import type { Bus } from './types.js';

/**
 * Says that a link's session started: its first raw chunk is on the raw stream. A core NATS
 * notice, not kept: decoders that miss it find the link at their next look at the stream.
 */
export function announceLinkStarted(bus: Bus, link: LinkAddress): void {
  bus.nc.publish(bus.names.linkStartedSubject(link.protocol, link.rig, link.link));
}

/**
 * Calls `onStarted` for every link of `protocols` whose session starts from now on; returns
 * what stops it. The callback runs in the NATS callback: it should only schedule work.
 */
export function watchLinksStarted(
  bus: Bus,
  protocols: readonly Protocol[],
  onStarted: (link: LinkAddress) => void,
): { stop(): void } {
  const subs = protocols.map((protocol) =>
    bus.nc.subscribe(bus.names.linkStartedFilter(protocol), {
      callback: (err, msg) => {
        if (err) return;
        const [rig, link] = msg.subject.split('.').slice(-2);
        if (rig && link) onStarted({ protocol, rig, link });
      },
    }),
  );
  return {
    stop: () => {
      for (const sub of subs) sub.unsubscribe();
    },
  };
}
