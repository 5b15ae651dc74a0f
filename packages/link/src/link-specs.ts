import { readFileSync } from 'node:fs';
import {
  isProtocol,
  isValidName,
  type LinkAddress,
  type LinkSettingsDocument,
  linkSettingsFromText,
  linkSettingsSchema,
} from '@tracehub/contracts';

export interface LinkSpec extends LinkAddress {
  /** Where to read: `tcp-listen::6601`, `serial:/dev/ttyUSB0?baud=115200`, ... */
  address: string;
  /** Link settings among the address's query parameters (`?objPtrSize=8&sigSize=1`). */
  settings: LinkSettingsDocument;
}

/**
 * Splits the link settings (names of the protocol's settings document) off an address's query
 * parameters; the others (`baud`, `pace`, ...) stay in the address for its source.
 */
export function splitLinkSettings(
  protocol: LinkAddress['protocol'],
  address: string,
): { address: string; settings: LinkSettingsDocument } {
  const q = address.indexOf('?');
  if (q < 0) return { address, settings: {} };
  const names = linkSettingsSchema(protocol).properties;
  const rest = new URLSearchParams();
  const settings: Array<[string, string]> = [];
  for (const [name, value] of new URLSearchParams(address.slice(q + 1))) {
    if (name in names) settings.push([name, value]);
    else rest.append(name, value);
  }
  const left = rest.toString();
  return {
    address: address.slice(0, q) + (left ? `?${left}` : ''),
    settings: linkSettingsFromText(protocol, settings, (path) => readFileSync(path, 'latin1')),
  };
}

/** Reads `protocol/rig/link=address;...` (TRACEHUB_LINKS); throws saying which entry is wrong. */
export function parseLinkSpecs(text: string): LinkSpec[] {
  const specs: LinkSpec[] = [];
  for (const entry of text
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const [protocol, rig, link, ...extra] = (eq < 0 ? entry : entry.slice(0, eq)).split('/');
    const address = eq < 0 ? '' : entry.slice(eq + 1);
    if (extra.length > 0 || !protocol || !rig || !link || !address) {
      throw new Error(
        `bad link '${entry}': write it as protocol/rig/link=address, e.g. qs/rig7/uart0=tcp-listen::6601`,
      );
    }
    if (!isProtocol(protocol))
      throw new Error(`bad link '${entry}': protocol must be qs, stp or swd, not '${protocol}'`);
    // `a=tcp-listen::6601,b=...`: the second link would read as part of the first one's address.
    if (/,\s*\w+\/[^/=]*\/[^/=]*=/.test(address)) {
      throw new Error(`bad link '${entry}': links are separated by ';', not ','`);
    }
    if (!isValidName(rig) || !isValidName(link)) {
      throw new Error(`bad link '${entry}': rig and link names are 1-64 letters, digits, '_' or '-'`);
    }
    try {
      specs.push({ protocol, rig, link, ...splitLinkSettings(protocol, address) });
    } catch (error) {
      throw new Error(`bad link '${entry}': ${(error as Error).message}`);
    }
  }
  const seen = new Set<string>();
  for (const s of specs) {
    const key = `${s.rig}/${s.link}`;
    if (seen.has(key)) throw new Error(`link ${key} is listed twice`);
    seen.add(key);
  }
  return specs;
}
