/**
 * A thread of `tracehub decode --protocol qs`: decodes the segments it is sent (see
 * decode-qs-threads.ts) to qspy's text and answers with the text as Latin-1 blocks.
 */
import { parentPort } from 'node:worker_threads';
import { TextBlocks } from '@tracehub/qs';
import type { QsThreadMessage } from './decode-qs-threads.js';
import { decodeSegmentText, type QsSegmentText } from './qs-text-output.js';

const port = parentPort;
if (!port) throw new Error('decode-qs-worker runs as a worker thread of tracehub decode');
// Blocks come back once written, to be filled again (OutputBuffer keeps up to 16).
const output = new TextBlocks('latin1');

port.on('message', (message: QsThreadMessage) => {
  if (message.kind === 'recycle') {
    for (const block of message.blocks) output.recycle(block);
    return;
  }
  let text: QsSegmentText;
  try {
    text = decodeSegmentText(message, output);
  } catch (err) {
    const error = err instanceof Error ? err.stack : `${err}`;
    text = { blocks: [], stats: {} as QsSegmentText['stats'], seen: { lengthErrors: 0, targetInfos: 0 }, error };
  }
  port.postMessage(
    text,
    text.blocks.map((b) => b.buffer as ArrayBuffer),
  );
});
