import type { ControlState, FrontEndPort } from '@tracehub/api-contract';
import { ago, count, h, kv } from '../../dom.js';

/** The target as the link's control point knows it: connected or not, QP version, sizes, dictionaries. */
export function targetTable(s: ControlState): HTMLTableElement {
  const t = s.target;
  const d = s.dictionaries;
  return h(
    'table',
    { class: 'kv' },
    kv('target', s.targetConnected ? 'connected' : 'not connected', s.targetConnected ? 'good' : 'bad'),
    kv(
      'QP version',
      typeof t.version === 'number'
        ? `${Math.floor(t.version / 100)}.${Math.floor(t.version / 10) % 10}.${t.version % 10}`
        : '?',
    ),
    kv(
      'sizes',
      `object ptr ${t.objPtrSize} B · function ptr ${t.funPtrSize} B · signal ${t.sigSize} B${t.fromTarget ? '' : ' (defaults: no target info yet)'}`,
    ),
    kv(
      'dictionaries',
      [
        count(d.objects ?? 0, 'object'),
        count(d.signals ?? 0, 'signal'),
        count(d.functions ?? 0, 'function'),
        count(d.commands ?? 0, 'command'),
        count(d.userRecords ?? 0, 'user record'),
      ].join(' · '),
    ),
  );
}

/**
 * The front-end port: where it listens, who holds it, what passed and what did not, and the
 * button that frees it (`release`, disabled while nobody holds it).
 */
export function frontEndTable(fe: FrontEndPort | null, release: () => Promise<void>): HTMLElement {
  if (!fe)
    return h(
      'p',
      { class: 'status' },
      'This link has no front-end port (add ?frontend=:7701 to its address for QView and QUTest).',
    );
  const channels = [fe.channels & 1 ? 'binary' : '', fe.channels & 2 ? 'text' : ''].filter(Boolean).join(' + ');
  const button = h(
    'button',
    {
      type: 'button',
      id: 'release-frontend',
      disabled: fe.peer === null,
      title: 'The front-end gets DETACH, and the next one to attach takes the port',
    },
    'Release port',
  );
  button.addEventListener('click', async () => {
    button.disabled = true;
    await release();
  });
  return h(
    'div',
    {},
    h(
      'table',
      { class: 'kv' },
      kv('listening', fe.listening),
      kv(
        'attached',
        fe.peer ? `${fe.peer.address}:${fe.peer.port}${channels ? ` (${channels})` : ' (detached)'}` : 'nobody',
        fe.peer ? 'good' : '',
      ),
      kv('last heard', fe.peer && fe.lastHeardMs ? ago(new Date(fe.lastHeardMs).toISOString()) : '—'),
      kv('datagrams', `${fe.datagramsIn} in · ${fe.datagramsOut} out`),
      kv(
        'not passed',
        `${fe.refused} refused (port held) · ${fe.ignored} malformed · ${fe.droppedSends} unsent (front-end too slow)`,
        fe.refused + fe.ignored + fe.droppedSends > 0 ? 'bad' : '',
      ),
    ),
    button,
  );
}
