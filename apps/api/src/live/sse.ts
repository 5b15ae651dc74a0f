/** One Server-Sent Event as the live tail writes it: its name, then its data on one line. */
export function sseEvent(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}

/** An event read back: its name and its data line. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads the events of a `text/event-stream` such as the live tail's, from text cut anywhere:
 * `push` gives the events completed by each piece. Blocks without an event and a data line
 * (comments, keep-alives, `retry:`) are skipped.
 */
export class SseEventReader {
  private buffer = '';

  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data });
    }
    return events;
  }
}
