import type { TraceRecord } from '@tracehub/contracts';

/** A QS-like record at `hostNs` with every optional column filled. */
export function qsRecord(seq: number, hostNs: string, session = 's-qs-1'): TraceRecord {
  return {
    rig: 'rig7',
    link: 'uart0',
    session,
    seq,
    chunk: Math.floor(seq / 4),
    protocol: 'qs',
    hostNs,
    targetTs: '18446744073709551615',
    kind: 'record',
    type: 1,
    name: 'QS_QEP_STATE_ENTRY',
    qs: { obj: 'l_blinky', sig: 'TIMEOUT_SIG', prio: 3 },
    fields: { obj: 'l_blinky', state: 'Blinky_on', nested: { list: [1, 'two', null] } },
    text: `0000000${seq} ===>Tran Obj=l_blinky,Sig=TIMEOUT_SIG,State=Blinky_off->Blinky_on 'quoted' "dq" \\ back`,
    raw: Buffer.from([0x01, 0x7e, 0x7d, 0x00, 0xff, seq & 0xff]).toString('base64'),
  };
}

/** An STP record without a target timestamp or QS addressing. */
export function stpRecord(seq: number, hostNs: string, session = 's-stp-1'): TraceRecord {
  return {
    rig: 'rig8',
    link: 'stp-a',
    session,
    seq,
    chunk: seq,
    protocol: 'stp',
    hostNs,
    targetTs: null,
    kind: 'error',
    type: 9,
    name: 'SEQ_GAP',
    stp: { master: 0xffff, channel: 12 },
    fields: {},
    text: 'gap: 3 bytes skipped\nsecond line ü',
    raw: '',
  };
}
