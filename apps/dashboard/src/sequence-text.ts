import type { Diagram } from './sequence-view.js';

/** Participant aliases safe in PlantUML and Mermaid (names like `Philo_inst[0]` are not). */
function aliases(d: Diagram): Map<string, string> {
  return new Map(d.participants.map((p, i) => [p, `P${i}`]));
}

/** Text that no diagram syntax misreads (no line breaks, colons, semicolons or hashes). */
const safe = (s: string) => s.replace(/[\r\n;:#]/g, ' ');

/** The diagram as PlantUML text. */
export function toPlantUml(d: Diagram): string {
  const a = aliases(d);
  const out = ['@startuml', 'skinparam sequenceMessageAlign center'];
  for (const p of d.participants) out.push(`participant "${p.replace(/"/g, "'")}" as ${a.get(p)}`);
  for (const s of d.steps) {
    if (s.kind === 'state')
      out.push(`hnote over ${a.get(s.obj)} : ${safe(s.from ? `${s.from} -> ${s.to}` : `init -> ${s.to}`)}`);
    else if (s.kind === 'publish')
      for (const d2 of s.deliveries)
        out.push(`${a.get(s.from)} -[#2277aa]> ${a.get(d2.to)} : ${safe(s.sig)} (publish)`);
    else if (s.kind === 'timeout')
      out.push(`${a.get(s.from)} -[#aa7722]-> ${a.get(s.to)} : ${safe(s.sig)} (time event)`);
    else out.push(`${a.get(s.from)} -> ${a.get(s.to)} : ${safe(s.sig)}`);
  }
  out.push('@enduml', '');
  return out.join('\n');
}

/** The diagram as Mermaid `sequenceDiagram` text. */
export function toMermaid(d: Diagram): string {
  const a = aliases(d);
  const out = ['sequenceDiagram'];
  for (const p of d.participants) out.push(`  participant ${a.get(p)} as ${safe(p)}`);
  for (const s of d.steps) {
    if (s.kind === 'state')
      out.push(`  Note over ${a.get(s.obj)}: ${safe(s.from ? `${s.from} → ${s.to}` : `init → ${s.to}`)}`);
    else if (s.kind === 'publish')
      for (const d2 of s.deliveries) out.push(`  ${a.get(s.from)}-)${a.get(d2.to)}: ${safe(s.sig)} (publish)`);
    else if (s.kind === 'timeout') out.push(`  ${a.get(s.from)}--)${a.get(s.to)}: ${safe(s.sig)} (time event)`);
    else out.push(`  ${a.get(s.from)}->>${a.get(s.to)}: ${safe(s.sig)}`);
  }
  return `${out.join('\n')}\n`;
}
