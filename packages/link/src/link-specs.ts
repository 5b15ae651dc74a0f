import { isProtocol, isValidName, type LinkAddress } from '@tracehub/contracts';

export interface LinkSpec extends LinkAddress {
  /** Where to read: `tcp-listen::6601`, `serial:/dev/ttyUSB0?baud=115200`, ... */
  address: string;
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
    if (!isProtocol(protocol)) throw new Error(`bad link '${entry}': protocol must be qs, stp or swd`);
    if (!isValidName(rig) || !isValidName(link)) {
      throw new Error(`bad link '${entry}': rig and link names are 1-64 letters, digits, '_' or '-'`);
    }
    specs.push({ protocol, rig, link, address });
  }
  const seen = new Set<string>();
  for (const s of specs) {
    const key = `${s.rig}/${s.link}`;
    if (seen.has(key)) throw new Error(`link ${key} is listed twice`);
    seen.add(key);
  }
  return specs;
}
