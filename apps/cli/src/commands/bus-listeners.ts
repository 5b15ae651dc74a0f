import type { Bus } from '@tracehub/bus';

/**
 * Refuses a bus prefix nothing reads: a replay there would make a new set of streams and print
 * a session no decoder will ever decode, and a tail there would wait for ever. Something reads
 * a prefix when its raw stream exists and a consumer of it is waiting for messages (a running
 * storage or decoder pulls all the time). `--force` skips the check.
 */
export async function assertSomethingReads(bus: Bus, prefix: string, command: string): Promise<void> {
  const named = prefix === '' ? 'the default bus (no prefix)' : `bus prefix '${prefix}'`;
  const stream = await bus.jsm.streams.info(bus.names.rawStream).catch(() => undefined);
  if (!stream) {
    throw new Error(
      `no tracehub service has run on ${named} (there is no stream ${bus.names.rawStream}): ` +
        'give --bus-prefix (or TRACEHUB_BUS_PREFIX) the value the services run with, or start them; ' +
        `--force ${command}s anyway`,
    );
  }
  for await (const consumer of bus.jsm.consumers.list(bus.names.rawStream)) {
    if (consumer.num_waiting > 0 || consumer.push_bound === true) return;
  }
  throw new Error(
    `no decoder or storage is reading ${named} now: start them (npm start) with TRACEHUB_BUS_PREFIX=${prefix}, ` +
      `or give --bus-prefix the value they run with; --force ${command}s anyway`,
  );
}
