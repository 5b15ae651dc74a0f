// Reads the captured qspy 7.4.0 sessions (shared/fixtures/qspy-udp) and replays them against
// QspyFrontEnd: the front-end's datagrams go in, the target's records go in where qspy
// forwarded them, and what comes out is compared with what qspy sent.
import { readFileSync } from 'node:fs';
import { encodeFrame } from '@tracehub/qs';
import { fixturePath } from '@tracehub/tests/support';
import { type FrontEndEvent, QspyFrontEnd } from '../src/front-end.js';
import { QsTargetLink } from '../src/target-link.js';

export type TranscriptEvent =
  | { kind: 'section'; label: string; text: string }
  | { kind: 'comment'; text: string }
  | { kind: 'fe'; port: number; bytes: Uint8Array; section: string }
  | { kind: 'qspy'; port: number; bytes: Uint8Array; section: string };

// `FE:<port> ->QSPY` / `<-QSPY` (scripted front-end logs) or `FE->QSPY` / `QSPY->FE` (UDP taps).
const DATAGRAM = /^\s*[\d.]+ (?:FE:(\d+) (->QSPY|<-QSPY)|(FE->QSPY|QSPY->FE)) len=\s*(\d+) ?([0-9a-f ]*)$/;
const TAP_PORT = 50000;
const SECTION = /^# (\d+[a-z]+)\. (.*)$/;

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

export function fromHex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
}

export function readTranscript(name: string): TranscriptEvent[] {
  const events: TranscriptEvent[] = [];
  let section = '';
  for (const line of readFileSync(fixturePath('qspy-udp', name), 'latin1').split('\n')) {
    const s = SECTION.exec(line);
    if (s) {
      section = s[1];
      events.push({ kind: 'section', label: s[1], text: s[2] });
      continue;
    }
    if (line.startsWith('#')) {
      events.push({ kind: 'comment', text: line });
      continue;
    }
    const d = DATAGRAM.exec(line);
    if (!d) continue;
    const bytes = fromHex(d[5]);
    if (bytes.length !== Number(d[4])) throw new Error(`${name}: length ${d[4]} but ${bytes.length} bytes in: ${line}`);
    const fromFe = d[2] === '->QSPY' || d[3] === 'FE->QSPY';
    events.push({ kind: fromFe ? 'fe' : 'qspy', port: d[1] ? Number(d[1]) : TAP_PORT, bytes, section });
  }
  return events;
}

/** One datagram sent to a front-end: its local port, its bytes (hex), and the section it belongs to. */
export interface Sent {
  port: number;
  hex: string;
  section: string;
}

export interface Replay {
  target: QsTargetLink;
  frontEnd: QspyFrontEnd;
  /** Sends a target frame (record id, payload) with a given target sequence number. */
  targetRecord(seq: number, id: number, payload?: Uint8Array): void;
  targetBytes(bytes: Uint8Array): void;
  connect(): void;
  disconnect(): void;
}

export interface ReplayOptions {
  /** Called when a section starts (label, e.g. '7g') or at a comment line (its text). */
  at?: Record<string, (r: Replay) => void>;
  /** Sections whose first forwarded record comes from a newly (re)started target. */
  reconnectIn?: string[];
  /**
   * Where the front-end was text-only, the target's records are not in the capture: take them
   * from a channels=3 capture of the same commands on the same target build, section by
   * section (the records that followed the n-th front-end datagram there follow it here).
   */
  answersFrom?: { transcript: string; sections: string[] };
  /** Called after each forwarded target-info record. */
  afterTargetInfo?: (r: Replay) => void;
}

/** Every dictionary record forwarded in a capture (raw, as forwarded). */
export function dictionaryRecords(name: string, beforeSection = '~'): Uint8Array[] {
  return readTranscript(name)
    .filter((e) => e.kind === 'qspy' && e.section < beforeSection && [54, 60, 61, 62, 63].includes(e.bytes[1]))
    .map((e) => (e as { bytes: Uint8Array }).bytes);
}

/** Per section: the target records before its first front-end datagram, then after each one. */
function answersOf(name: string): Map<string, Uint8Array[][]> {
  const out = new Map<string, Uint8Array[][]>();
  for (const e of readTranscript(name)) {
    if (e.kind === 'section') out.set(e.label, [[]]);
    else if (e.kind === 'fe') out.get(e.section)?.push([]);
    else if (e.kind === 'qspy' && e.bytes[1] >= 1 && e.bytes[1] < 128) {
      const groups = out.get(e.section);
      groups?.[groups.length - 1].push(e.bytes);
    }
  }
  return out;
}

export interface ReplayResult extends Replay {
  expected: Sent[];
  actual: Sent[];
  /** QS-RX frames written to the target, hex. */
  frames: string[];
  events: FrontEndEvent[];
}

/**
 * Replays a transcript. Target records that qspy forwarded in binary are fed to the target
 * side as frames (the record plus its checksum, stuffed) at the point qspy forwarded them.
 */
export function replay(name: string, options: ReplayOptions = {}): ReplayResult {
  const frames: string[] = [];
  const actual: Sent[] = [];
  const events: FrontEndEvent[] = [];
  let section = '';
  const target = new QsTargetLink({ write: (frame) => frames.push(hex(frame)) });
  const frontEnd = new QspyFrontEnd({
    target,
    send: (datagram, to) => actual.push({ port: to.port, hex: hex(datagram), section }),
    onEvent: (e) => events.push(e),
  });
  const r: Replay = {
    target,
    frontEnd,
    targetRecord: (seq, id, payload) => {
      if (!target.connected) target.targetConnected();
      target.data(encodeFrame(seq, id, payload));
    },
    targetBytes: (bytes) => target.data(bytes),
    connect: () => target.targetConnected(),
    disconnect: () => target.targetDisconnected(),
  };
  const expected: Sent[] = [];
  const reconnected = new Set<string>();
  const feed = (inSection: string, record: Uint8Array) => {
    if (options.reconnectIn?.includes(inSection) && !reconnected.has(inSection)) {
      reconnected.add(inSection);
      target.targetDisconnected();
      target.targetConnected();
    }
    r.targetRecord(record[0], record[1], record.subarray(2));
    if (record[1] === 64) options.afterTargetInfo?.(r);
  };
  const answers = options.answersFrom ? answersOf(options.answersFrom.transcript) : new Map<string, Uint8Array[][]>();
  const borrowed = (label: string) => options.answersFrom?.sections.includes(label) ?? false;
  let feInSection = 0;
  for (const e of readTranscript(name)) {
    switch (e.kind) {
      case 'section':
        section = e.label;
        feInSection = 0;
        options.at?.[e.label]?.(r);
        if (borrowed(section)) for (const rec of answers.get(section)?.[0] ?? []) feed(section, rec);
        break;
      case 'comment':
        for (const [key, hook] of Object.entries(options.at ?? {})) if (e.text.startsWith(key)) hook(r);
        break;
      case 'fe':
        frontEnd.datagram(e.bytes, { address: '127.0.0.1', port: e.port });
        feInSection++;
        if (borrowed(section)) for (const rec of answers.get(section)?.[feInSection] ?? []) feed(section, rec);
        break;
      case 'qspy': {
        expected.push({ port: e.port, hex: hex(e.bytes), section: e.section });
        const id = e.bytes[1];
        // qspy sends DETACH when it shuts down.
        if (id === 129 && e.bytes.length === 2) frontEnd.shutdown();
        if (id >= 1 && id < 128 && !borrowed(e.section)) feed(e.section, e.bytes);
        break;
      }
    }
  }
  return { ...r, expected, actual, frames, events };
}

/** The QS-RX bytes qspy wrote to the target in a TCP tap, one string per target connection. */
export function tappedFrames(name: string): string[] {
  const connections: string[] = [];
  for (const line of readFileSync(fixturePath('qspy-udp', name), 'latin1').split('\n')) {
    if (/--- target connection #\d+ opened/.test(line)) connections.push('');
    const m = /QSPY->TRG\s+\d+ bytes raw: ([0-9a-f ]+)$/.exec(line);
    if (m) connections[connections.length - 1] += m[1].replace(/\s+/g, '');
  }
  return connections;
}

/** Splits written QS-RX bytes into frames (each ends with 0x7E), hex. */
export function splitFrames(bytesHex: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < bytesHex.length; i += 2) {
    cur += bytesHex.slice(i, i + 2);
    if (bytesHex.slice(i, i + 2) === '7e') {
      out.push(cur);
      cur = '';
    }
  }
  if (cur) out.push(cur);
  return out;
}
