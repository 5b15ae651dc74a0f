import { createLinkSource, parseLinkSpecs } from '@tracehub/link';
import { takeFrontEndOption } from '@tracehub/qspy-frontend';
import { type ConfigProblem, portInUseProblem } from '@tracehub/service-kit';

const LINKS_EXPECTED =
  "links separated by ';', each protocol/rig/link=address with protocol qs, stp or swd, e.g. qs/rig7/uart0=tcp-listen::6601;stp/rig7/swo=serial:/dev/ttyUSB0";

/**
 * TRACEHUB_LINKS checked before the gateway starts: every link written right, every address
 * one the gateway can open, and no port it would listen on taken by another process. A
 * mistake here is a setting to fix (exit 2), never a crash to restart.
 */
export async function linksProblems(links: string): Promise<ConfigProblem[]> {
  const problem = (why: string): ConfigProblem => ({
    variable: 'TRACEHUB_LINKS',
    got: links,
    why,
    expected: LINKS_EXPECTED,
  });
  let listeners: Array<{ listensOn: { host: string; port: number; transport: 'tcp' | 'udp' }; link: string }>;
  try {
    listeners = parseLinkSpecs(links).flatMap((spec) => {
      const { address, frontEnd } = takeFrontEndOption(spec.address);
      if (frontEnd && spec.protocol !== 'qs')
        throw new Error(`link ${spec.rig}/${spec.link}: frontend= is for QS links`);
      const { listensOn } = createLinkSource(address);
      return listensOn ? [{ listensOn, link: `${spec.protocol}/${spec.rig}/${spec.link}` }] : [];
    });
  } catch (error) {
    return [problem((error as Error).message)];
  }
  const problems: ConfigProblem[] = [];
  for (const { listensOn, link } of listeners) {
    const inUse = await portInUseProblem('TRACEHUB_LINKS', listensOn.port, listensOn.host, listensOn.transport);
    if (inUse) problems.push(problem(`link ${link}: ${inUse.why}`));
  }
  return problems.slice(0, 1);
}
