import { createLinkSource, type LinkSpec, parseLinkSpecs } from '@tracehub/link';
import { takeFrontEndOption } from '@tracehub/qspy-frontend';
import { type ConfigProblem, portInUseProblem } from '@tracehub/service-kit';
import { traceBoxOptionOf } from './tracebox-outputs.js';

/**
 * The gateway's links from TRACEHUB_LINKS: each link's source and the options of the gateway's
 * own (`?frontend=` for QS links, `?tracebox=` for STP and SWD links) taken out of its address.
 * Throws saying what is wrong. The one reading of the setting, for the check and for the start.
 */
export function gatewayLinksOf(links: string) {
  return parseLinkSpecs(links).map((spec: LinkSpec) => {
    const { address: rest, traceBox } = traceBoxOptionOf(spec, spec.address);
    const { address, frontEnd } = takeFrontEndOption(rest);
    if (frontEnd && spec.protocol !== 'qs') throw new Error(`link ${spec.rig}/${spec.link}: frontend= is for QS links`);
    return { spec, source: createLinkSource(address), frontEnd, traceBox };
  });
}

const LINKS_EXPECTED =
  "links separated by ';', each protocol/rig/link=address with protocol qs, stp or swd, e.g. qs/rig7/uart0=tcp-listen::6601;stp/rig7/swo=serial:/dev/ttyUSB0";

type Listener = { host: string; port: number; transport: 'tcp' | 'udp' };

/**
 * TRACEHUB_LINKS checked before the gateway starts: every link written right, every address
 * one the gateway can open, and no port it would listen on (the link's own, its front-end
 * port, its trace box output) taken by another process. A mistake here is a setting to fix
 * (exit 2), never a crash to restart.
 */
export async function linksProblems(links: string): Promise<ConfigProblem[]> {
  const problem = (why: string): ConfigProblem => ({
    variable: 'TRACEHUB_LINKS',
    got: links,
    why,
    expected: LINKS_EXPECTED,
  });
  let listeners: Array<{ listensOn: Listener; link: string }>;
  try {
    listeners = gatewayLinksOf(links).flatMap(({ spec, source, frontEnd, traceBox }) => {
      const link = `${spec.protocol}/${spec.rig}/${spec.link}`;
      const ports: Listener[] = [
        ...(source.listensOn ? [source.listensOn] : []),
        ...(frontEnd ? [{ host: frontEnd.host, port: frontEnd.port, transport: 'udp' as const }] : []),
        ...(traceBox ? [{ host: traceBox.host, port: traceBox.port, transport: 'tcp' as const }] : []),
      ];
      return ports.map((listensOn) => ({ listensOn, link }));
    });
  } catch (error) {
    return [problem((error as Error).message)];
  }
  for (const { listensOn, link } of listeners) {
    const inUse = await portInUseProblem('TRACEHUB_LINKS', listensOn.port, listensOn.host, listensOn.transport);
    if (inUse) return [problem(`link ${link}: ${inUse.why}`)];
  }
  return [];
}
