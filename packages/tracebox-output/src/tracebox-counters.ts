import { OST_PROTOCOL_TRACEBOX, OST_VERSION, PHONET_MEDIA_TCPIP, TB_MARKER } from '@tracehub/stp';

/** Where an OST message's body starts: after the short header, or after the extended length. */
function ostBodyOffset(message: Uint8Array): number {
  return message[3] === 0 ? 8 : 4;
}

/**
 * The two counters the trace box keeps for everything it sends, whatever the port (spec §9.2,
 * §10): the marker index (32 bits, from 1 after the box starts) and the PhoNet transaction id
 * (0..255, wrapping). A decoder numbers its own link session from the start; the trace-box
 * output of a gateway renumbers every message it sends with one pair of counters for the
 * whole gateway process, as one box would.
 */
export class TraceBoxCounters {
  /** The index the next marker gets. */
  private nextMarker = 1;
  /** The transaction id the next PhoNet message gets. */
  private nextTransaction = 0;

  /** The last marker index given (0: none yet). */
  get markerIndex(): number {
    return this.nextMarker - 1;
  }

  /** The last PhoNet transaction id given (255 before the first: the one before 0). */
  get transaction(): number {
    return (this.nextTransaction + 255) & 0xff;
  }

  /**
   * The message as this gateway's box sends it, numbered in place (the caller's own bytes,
   * decoded from a record: no copy per message): the marker index and, for PhoNet, the
   * transaction id from the gateway's counters; other OST messages unchanged.
   */
  stamp(message: Uint8Array): Uint8Array {
    if (message.length < 12) return message;
    if (message[0] === PHONET_MEDIA_TCPIP) {
      message[8] = this.nextTransaction;
      this.nextTransaction = (this.nextTransaction + 1) & 0xff;
      if (message[9] === TB_MARKER && message.length >= 24) this.writeIndex(message, 20);
      return message;
    }
    if (message[0] === OST_VERSION && message[2] === OST_PROTOCOL_TRACEBOX) {
      const at = ostBodyOffset(message);
      if (message[at] === TB_MARKER && message.length >= at + 15) this.writeIndex(message, at + 11);
    }
    return message;
  }

  /**
   * Moves the counters on past a message no one is sent, as `stamp` would: one transaction id
   * for a PhoNet message, one marker index for a marker.
   */
  skip(phonet: boolean, marker: boolean): void {
    if (phonet) this.nextTransaction = (this.nextTransaction + 1) & 0xff;
    if (marker) this.nextMarker = this.nextMarker >= 0xffffffff ? 1 : this.nextMarker + 1;
  }

  private writeIndex(out: Uint8Array, at: number): void {
    const index = this.nextMarker;
    this.skip(false, true);
    new DataView(out.buffer, out.byteOffset, out.byteLength).setUint32(at, index);
  }
}
