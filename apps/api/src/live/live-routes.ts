import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { LiveQuery, problemResponses } from '@tracehub/api-contract';
import { recordMatchOf } from '@tracehub/db';
import type { WebSocket } from 'ws';
import { sendProblem } from '../plugins/problems.js';
import { splitListParams, toRecordFilter } from '../schemas.js';
import { type LiveHub, type LiveSink, missedMessages } from './live-hub.js';
import { sseEvent } from './sse.js';

export interface LiveRoutesOptions {
  hub: LiveHub;
}

/** Bytes a WebSocket may hold unsent before its client counts as slow. */
const WS_HIGH_WATER = 1 << 20;
const HEARTBEAT_MS = 15_000;

/**
 * Live tail over Server-Sent Events and WebSocket, with the records-page filters. Messages:
 * `records` (a JSON array of TraceRecords, in bus order) and `missed` (`{missed, missedTotal, reason}`:
 * records this client did not get because it read slower than they came).
 */
export const liveRoutes: FastifyPluginAsyncTypebox<LiveRoutesOptions> = async (app, { hub }) => {
  app.addHook('preValidation', async (request) => splitListParams(request.query as Record<string, unknown>));

  app.get(
    '/live/sse',
    {
      config: { queryToken: true },
      schema: {
        summary: 'Live tail as Server-Sent Events',
        description:
          'Events `records` (data: JSON array of records) and `missed` (data: {missed, missedTotal, reason}) when this client read slower than the records came and its oldest queued records were dropped.',
        tags: ['live'],
        querystring: LiveQuery,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...problemResponses },
      },
    },
    async (request, reply) => {
      const filter = toRecordFilter(request.query);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        ...corsHeaders(reply.getHeaders()),
      });
      res.write('retry: 2000\n: tracehub live tail\n\n');
      const missed = missedMessages();
      const sink: LiveSink = {
        write: (records) => res.write(sseEvent('records', JSON.stringify(records))),
        missed: (n, reason) => res.write(sseEvent('missed', missed(n, reason))),
        whenWritable: (resume) => res.once('drain', resume),
        end: () => res.end(),
      };
      const client = hub.connect(recordMatchOf(filter), sink);
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
      const end = () => {
        clearInterval(heartbeat);
        hub.disconnect(client);
      };
      res.on('close', end);
      res.on('error', end);
    },
  );

  app.route({
    method: 'GET',
    url: '/live/ws',
    config: { queryToken: true },
    // A plain GET (no Upgrade) gets a problem saying what this route is, not an empty 404.
    handler: async (_request, reply) =>
      sendProblem(
        reply.header('upgrade', 'websocket'),
        426,
        'this route is a WebSocket: connect with Upgrade: websocket',
      ),
    schema: {
      summary: 'Live tail over WebSocket',
      description:
        'Each message is JSON: {"type":"records","records":[...]} or {"type":"missed","missed":n,"missedTotal":n,"reason":"..."}.',
      tags: ['live'],
      querystring: LiveQuery,
      response: { 426: problemResponses[400] },
    },
    wsHandler: (socket: WebSocket, request) => {
      const filter = toRecordFilter(request.query as typeof request.query);
      const missed = missedMessages();
      const send = (text: string) => {
        socket.send(text);
        return socket.bufferedAmount < WS_HIGH_WATER;
      };
      const sink: LiveSink = {
        write: (records) => send(`{"type":"records","records":${JSON.stringify(records)}}`),
        missed: (n, reason) => send(`{"type":"missed",${missed(n, reason).slice(1)}`),
        whenWritable: (resume) => {
          const poll = setInterval(() => {
            if (socket.readyState !== socket.OPEN) return clearInterval(poll);
            if (socket.bufferedAmount < WS_HIGH_WATER / 2) {
              clearInterval(poll);
              resume();
            }
          }, 10);
        },
        end: () => socket.close(1001, 'server closing'),
      };
      const client = hub.connect(recordMatchOf(filter), sink);
      socket.on('close', () => hub.disconnect(client));
      socket.on('error', () => hub.disconnect(client));
    },
  });
};

function corsHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.startsWith('access-control-') || k === 'vary') out[k] = String(v);
  return out;
}
