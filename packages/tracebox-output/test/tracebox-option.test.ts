import { TraceBoxCounters, takeTraceBoxOption } from '@tracehub/tracebox-output';
import { describe, expect, it } from 'vitest';

describe('the tracebox= link option', () => {
  it('takes the port (and the queue) out of the address, leaving the rest for the source', () => {
    expect(takeTraceBoxOption('tcp-listen::7000?tracebox=:7801')).toEqual({
      address: 'tcp-listen::7000',
      traceBox: { host: '0.0.0.0', port: 7801 },
    });
    expect(
      takeTraceBoxOption('serial:/dev/ttyS1?baud=921600&tracebox=127.0.0.1:0&tracebox-queue=50&output=phonet'),
    ).toEqual({
      address: 'serial:/dev/ttyS1?baud=921600&output=phonet',
      traceBox: { host: '127.0.0.1', port: 0, queueMessages: 50 },
    });
    expect(takeTraceBoxOption('tcp-listen::7000?tracebox=7802').traceBox).toEqual({ host: '0.0.0.0', port: 7802 });
    expect(takeTraceBoxOption('tcp-listen::7000?version=1')).toEqual({ address: 'tcp-listen::7000?version=1' });
  });

  it('names what is wrong', () => {
    expect(() => takeTraceBoxOption('tcp-listen::7000?tracebox=:99999')).toThrow(/tracebox= is \[HOST\]:PORT/);
    expect(() => takeTraceBoxOption('tcp-listen::7000?tracebox=:x')).toThrow(/tracebox= is/);
    expect(() => takeTraceBoxOption('tcp-listen::7000?tracebox-queue=5')).toThrow(/tracebox-queue needs tracebox=/);
    expect(() => takeTraceBoxOption('tcp-listen::7000?tracebox=:1&tracebox-queue=0')).toThrow(/at least 1/);
  });
});

describe('one marker index and one PhoNet transaction counter per gateway', () => {
  it('numbers markers from 1 and PhoNet messages 0..255 wrapping, whatever the message numbered before', () => {
    const counters = new TraceBoxCounters();
    // A short OST marker as a decoder numbers it (index 1 of its session), twice.
    const ostMarker = Uint8Array.from(Buffer.from('10f08110ff020100000000000000000000000100', 'hex'));
    expect(Buffer.from(counters.stamp(ostMarker)).readUInt32BE(15)).toBe(1);
    expect(Buffer.from(counters.stamp(ostMarker)).readUInt32BE(15)).toBe(2);
    // An OST trace message is not numbered and not copied.
    const ostTrace = Uint8Array.from(Buffer.from('1000840f0b4100d0000000000000000010000000', 'hex'));
    expect(counters.stamp(ostTrace)).toBe(ostTrace);
    // PhoNet: every message takes the next transaction id; a marker the next index too.
    const phonetTrace = Uint8Array.from(Buffer.from('1d104c7c0012000b0794410fd00000000000000010000000', 'hex'));
    const ids = Array.from({ length: 258 }, () => counters.stamp(phonetTrace)[8]);
    expect(ids.slice(0, 3)).toEqual([0, 1, 2]);
    expect(ids.slice(255)).toEqual([255, 0, 1]);
    const phonetMarker = Uint8Array.from(Buffer.from('1d104c7c001300010cff0200d0000000000000000000000100', 'hex'));
    const stamped = Buffer.from(counters.stamp(phonetMarker));
    expect([stamped[8], stamped.readUInt32BE(20)]).toEqual([2, 3]);
    expect(counters.markerIndex).toBe(3);
    expect(counters.transaction).toBe(2);
  });
});
