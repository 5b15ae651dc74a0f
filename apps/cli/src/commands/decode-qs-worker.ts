/**
 * A thread of `tracehub decode --protocol qs`: decodes the segments it is sent (see
 * decode-qs-threads.ts) to qspy's text, each with a decoder restored from the snapshot that
 * came with it, and answers with the text as Latin-1 blocks.
 */
import { parentPort } from 'node:worker_threads';
import { QsStreamSegments } from '@tracehub/qs';
import type { QsSegmentText, QsThreadMessage } from './decode-qs-threads.js';
import { OutputBlocks, type QsTextSeen, qsTextSink } from './qs-text-output.js';

const port = parentPort;
if (!port) throw new Error('decode-qs-worker runs as a worker thread of tracehub decode');
const ctx = { hostNs: 0n };
// Blocks come back once written: enough of them kept for the segments in flight.
const output = new OutputBlocks('latin1', true, 128);

port.on('message', (message: QsThreadMessage) => {
  if (message.kind === 'recycle') {
    for (const block of message.blocks) output.recycle(block);
    return;
  }
  const seen: QsTextSeen = { lengthErrors: 0, targetInfos: 0 };
  try {
    const decoder = QsStreamSegments.decoderFor(message.snapshot);
    decoder.textOnly = true;
    const sink = qsTextSink(output, seen);
    for (const chunk of message.chunks) decoder.push(chunk, ctx, sink);
    if (message.last) decoder.end(ctx, sink);
    const blocks = output.take();
    const text: QsSegmentText = { blocks, stats: decoder.stats() as unknown as QsSegmentText['stats'], seen };
    port.postMessage(
      text,
      blocks.map((b) => b.buffer as ArrayBuffer),
    );
  } catch (err) {
    port.postMessage({ blocks: [], stats: {}, seen, error: err instanceof Error ? err.stack : `${err}` });
  }
});
