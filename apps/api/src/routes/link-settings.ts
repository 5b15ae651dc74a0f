import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type Bus, requestControl } from '@tracehub/bus';
import { isProtocol, LinkSettingsError, validateLinkSettings } from '@tracehub/contracts';
import {
  type Database,
  getLinkById,
  type LinkSettingsChangeRow,
  linkSettingsChanges,
  setLinkSettings,
} from '@tracehub/db';
import { DictionaryFileError, parseDictionaryFile } from '@tracehub/qs';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { badRequest, notFound } from '../plugins/problems.js';
import { problemResponses } from '../schemas.js';

export interface LinkSettingsRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  /** How long to wait for the link's gateway to start a new session (`apply: 'now'`), ms. */
  timeoutMs: number;
}

const LinkId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
const SettingsDocument = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'the whole settings document of the link (QS: version, objPtrSize, funPtrSize, timeSize, sigSize, eventSize, queueCtrSize, poolCtrSize, poolBlkSize, teCtrSize, dictionaries (a qspy .dic text); STP/SWD: version, littleEndianMasters, output, resyncPauseMs, maxPauseMs, start, port, processor)',
});
const Applies = Type.Union([Type.Literal('next-session'), Type.Literal('now')]);

const Change = Type.Object({
  at: Type.String({ format: 'date-time' }),
  by: Type.String(),
  via: Type.String(),
  applies: Applies,
  previous: SettingsDocument,
  settings: SettingsDocument,
});

const SettingsReply = Type.Object({
  linkId: Type.Integer(),
  protocol: Type.String(),
  settings: SettingsDocument,
  history: Type.Array(Change, { description: 'changes, newest first' }),
});

const PutBody = Type.Object(
  {
    settings: SettingsDocument,
    apply: Type.Optional(
      Type.Union([Type.Literal('next-session'), Type.Literal('now')], {
        description:
          "'next-session' (default): from the link's next session; 'now': the gateway ends the session and starts a new one on the same connection",
      }),
    ),
    by: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000]*$', description: 'who makes the change' }),
    ),
    via: Type.Optional(Type.Union([Type.Literal('api'), Type.Literal('dashboard')], { default: 'api' })),
  },
  { additionalProperties: false },
);

const PutReply = Type.Object({
  linkId: Type.Integer(),
  settings: SettingsDocument,
  applies: Applies,
  session: Type.Union([Type.String(), Type.Null()], {
    description: "with apply 'now': the session the new settings start with",
  }),
  note: Type.Optional(Type.String()),
});

const changeOf = (row: LinkSettingsChangeRow) => ({
  at: row.changed_at.toISOString(),
  by: row.changed_by,
  via: row.via,
  applies: row.applies,
  previous: row.previous,
  settings: row.settings,
});

/** `token sha256:1a2b3c4d`: names the caller's token without revealing it. */
function tokenFingerprint(request: FastifyRequest): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return m ? `token sha256:${createHash('sha256').update(m[1]).digest('hex').slice(0, 8)}` : 'no token';
}

/** A link's settings document and its history; `PUT` (control scope) replaces the document. */
export const linkSettingsRoutes: FastifyPluginAsyncTypebox<LinkSettingsRoutesOptions> = async (
  app,
  { db, bus, timeoutMs },
) => {
  app.get(
    '/links/:id/settings',
    {
      schema: {
        summary: "A link's settings document and who changed it when",
        tags: ['links'],
        params: LinkId,
        response: { 200: SettingsReply, ...problemResponses },
      },
    },
    async (request) => {
      const link = await getLinkById(db, request.params.id);
      if (!link) throw notFound(`no link with id ${request.params.id}`);
      const history = await linkSettingsChanges(db, link.id);
      return { linkId: link.id, protocol: link.protocol, settings: link.settings, history: history.map(changeOf) };
    },
  );

  app.put(
    '/links/:id/settings',
    {
      config: { scope: 'control' },
      schema: {
        summary: "Replace a link's settings document",
        description:
          "Validated against the link protocol's settings; kept with who made the change and when. Applies from the link's next session, or at once with `apply: 'now'`.",
        tags: ['links'],
        params: LinkId,
        body: PutBody,
        response: { 200: PutReply, ...problemResponses },
      },
    },
    async (request) => {
      const link = await getLinkById(db, request.params.id);
      if (!link) throw notFound(`no link with id ${request.params.id}`);
      if (!isProtocol(link.protocol)) throw badRequest(`link ${link.id} has an unknown protocol '${link.protocol}'`);
      let settings: Record<string, unknown>;
      try {
        settings = validateLinkSettings(link.protocol, request.body.settings) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof LinkSettingsError) throw badRequest(`body.settings: ${error.message}`);
        throw error;
      }
      // A .dic the decoder could not read would only be found at the next session: read it now.
      if (typeof settings.dictionaries === 'string') {
        try {
          parseDictionaryFile(settings.dictionaries);
        } catch (error) {
          if (error instanceof DictionaryFileError) {
            throw badRequest(`body.settings.dictionaries: not a .dic file qspy would read: ${error.message}`);
          }
          throw error;
        }
      }
      const applies = request.body.apply ?? 'next-session';
      const fingerprint = tokenFingerprint(request);
      await setLinkSettings(db, {
        linkId: link.id,
        settings,
        changedBy: request.body.by ? `${request.body.by} (${fingerprint})` : fingerprint,
        via: request.body.via ?? 'api',
        applies,
      });
      if (applies === 'next-session') return { linkId: link.id, settings, applies, session: null };
      try {
        const reply = await requestControl(
          bus,
          { rig: link.rig, link: link.name },
          { newSession: 'link settings changed' },
          timeoutMs,
        );
        if (reply.ok && reply.session) return { linkId: link.id, settings, applies, session: reply.session };
        return {
          linkId: link.id,
          settings,
          applies: 'next-session' as const,
          session: null,
          note: `stored; the gateway could not start a new session (${reply.error ?? 'no reason given'}): the settings apply from the next session`,
        };
      } catch {
        return {
          linkId: link.id,
          settings,
          applies: 'next-session' as const,
          session: null,
          note: 'stored; no gateway answered for this link: the settings apply from its next session',
        };
      }
    },
  );
};
