// Two runs of one application for the comparison tests: a stored capture's records stored
// again as a second run, on another rig and later, with one transition entering another state.
import type { TraceRecord } from '@tracehub/contracts';
import type { Database } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { storeRecordBatches, storeSessionStart } from './stored-session.js';

/**
 * Stores `first` again as session `session` on `rig` (link and the rest as they were), `laterNs`
 * later, with the transition in the middle made to enter the state another transition of its
 * object enters; resolves with that transition (as the first run has it).
 */
export async function storeSecondRun(
  db: Kysely<Database>,
  first: readonly TraceRecord[],
  place: { rig: string; session: string; laterNs: bigint },
): Promise<TraceRecord> {
  const transitions = first.filter((r) => r.name === 'QS_QEP_TRAN');
  const changed = transitions[Math.floor(transitions.length / 2)];
  const other = transitions.find((r) => r.qs?.obj === changed.qs?.obj && r.fields.target !== changed.fields.target);
  if (!other) throw new Error('the capture has no second state for the object to enter');
  const second = first.map((r) => ({
    ...r,
    rig: place.rig,
    session: place.session,
    hostNs: (BigInt(r.hostNs) + place.laterNs).toString(),
    ...(r.seq === changed.seq
      ? {
          fields: { ...r.fields, target: other.fields.target },
          text: r.text.replace(`->${changed.fields.target}`, `->${other.fields.target}`),
        }
      : {}),
  }));
  const startNs = BigInt(first[0].hostNs) + place.laterNs;
  await storeSessionStart(db, { rig: place.rig, link: first[0].link, session: place.session, startNs }, 'qs');
  await storeRecordBatches(db, second, 1000);
  return changed;
}
