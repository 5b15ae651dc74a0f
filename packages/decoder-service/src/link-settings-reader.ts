import type { LinkAddress } from '@tracehub/contracts';
import type { LinkSettings } from './types.js';

/** Reads the settings of many links at once, keyed `rig/link`; a link not known has no entry. */
export type ReadLinksSettings = (links: LinkAddress[]) => Promise<Map<string, LinkSettings>>;

interface Waiting {
  link: LinkAddress;
  resolve: (settings: LinkSettings) => void;
  reject: (err: unknown) => void;
}

/** Links read in one statement at most. */
const LINKS_A_READ = 500;

/**
 * A new session's settings, read for many links in one statement. When a fleet's gateways
 * start, a decoder takes up hundreds of links in the same second and each asks for its
 * settings: one statement each queued for the decoder's two connections, behind a busy event
 * loop, and some waited past the pool's connect timeout (256 links: tens of "timeout exceeded
 * when trying to connect", and those links stopped and taken up again seconds later). Here the
 * first asks at once, and whoever asks while a read is out is answered by the next one.
 */
export class LinkSettingsReader {
  private waiting: Waiting[] = [];
  private reading = false;

  constructor(private readonly read: ReadLinksSettings) {}

  get(link: LinkAddress): Promise<LinkSettings> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ link, resolve, reject });
      if (!this.reading) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.reading = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, LINKS_A_READ);
      try {
        const found = await this.read(batch.map((w) => w.link));
        for (const w of batch) w.resolve(found.get(`${w.link.rig}/${w.link.link}`) ?? {});
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.reading = false;
  }
}
