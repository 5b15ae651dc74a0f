import { busPrefixSetting, natsConnectionSettings, streamSettings, Type } from '@tracehub/service-kit';

export const GatewayConfigSchema = Type.Object({
  ...natsConnectionSettings,
  TRACEHUB_BUS_PREFIX: busPrefixSetting,
  ...streamSettings,
  TRACEHUB_LINKS: Type.String({
    default: '',
    description:
      "the links to read, ';'-separated, each 'protocol/rig/link=address' (e.g. 'qs/rig7/uart0=tcp-listen::6601'); empty: none",
  }),
  GATEWAY_BUFFER_BYTES: Type.Integer({
    minimum: 64 * 1024,
    default: 64 * 1024 * 1024,
    description:
      'bytes held per link while NATS is away or the raw stream is full (then the oldest are dropped and reported in th-lost), at least 65536',
  }),
  GATEWAY_CHUNK_BYTES: Type.Integer({
    minimum: 256,
    maximum: 256 * 1024,
    default: 16 * 1024,
    description: 'chunk size, 256..262144 bytes',
  }),
  GATEWAY_FLUSH_MS: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    // Every chunk costs the same few messages whatever its size: at 20 ms, 64 links at 115 200
    // baud made 3 200 chunks a second and fell 8 s behind on 2 cores (docs/scaling.md).
    default: 100,
    description: 'how long a chunk waits to hold GATEWAY_MIN_CHUNK_BYTES, ms',
  }),
  GATEWAY_MIN_CHUNK_BYTES: Type.Integer({
    minimum: 0,
    maximum: 256 * 1024,
    // A slow link (115 200 baud, 11.5 kB/s) fills 8 KiB in about 0.7 s: under two chunks a
    // second instead of ten, so a fleet of slow links costs its bytes, not its count. The fleet
    // bench's 256 links fell further behind with 4 KiB (docs/scaling.md).
    default: 8192,
    description: 'a chunk sealed at GATEWAY_FLUSH_MS holds at least this many bytes, 0..262144',
  }),
  GATEWAY_MAX_FLUSH_MS: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 1000,
    description: 'longest a chunk waits to fill, whatever it holds, ms (at least GATEWAY_FLUSH_MS)',
  }),
  GATEWAY_NETWORK_PAUSE_MS: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    // Longer than TCP delivery jitter (a delayed ACK against Nagle is 40 ms): packages/link/README.md.
    default: 50,
    description:
      'shortest idle time of a tcp-listen, tcp-connect or udp STP link taken as a pause of its line, ms (1..10000)',
  }),
});
