/** What `records` needs to know of a stored session, from Postgres or from the API. */
export interface StoredSession {
  id: string;
  rig: string;
  link: string;
  complete: boolean;
  records: number;
  /** Records in all, once the session ended (null while it is open). */
  recordTotal: number | null;
  ended: boolean;
}

export interface SessionChoice {
  session?: string;
  rig?: string;
  link?: string;
  /** Milliseconds to wait for the session to be completely stored. */
  waitMs: number;
}

/**
 * The session `records` prints: `find` asked again until it is completely stored or `waitMs`
 * has passed; refused when there is none or it is not the named link's; a warning on stderr
 * when it is not completely stored yet. The same whether `find` asks Postgres or the API.
 */
export async function chooseSession(
  choice: SessionChoice,
  find: () => Promise<StoredSession | undefined>,
): Promise<StoredSession> {
  const deadline = Date.now() + choice.waitMs;
  let session = await find();
  while (!session?.complete && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    session = await find();
  }
  if (!session) {
    throw new Error(
      choice.session
        ? `no session '${choice.session}' is stored`
        : `link ${choice.rig}/${choice.link} has no stored session`,
    );
  }
  if ((choice.rig && session.rig !== choice.rig) || (choice.link && session.link !== choice.link)) {
    throw new Error(
      `session '${session.id}' belongs to ${session.rig}/${session.link}, not ${choice.rig}/${choice.link}`,
    );
  }
  if (!session.complete) {
    process.stderr.write(
      `warning: session ${session.id} is not completely stored yet (${session.records} records so far${
        session.ended ? `, of ${session.recordTotal}` : ', still open'
      })\n`,
    );
  }
  return session;
}
