import { createHash } from 'node:crypto';
import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import {
  LinkSettingsPut,
  LinkSettingsPutReply,
  LinkSettingsReply,
  type SettingName,
  type SettingsInUse,
} from '@tracehub/api-contract';
import { type Bus, requestControl } from '@tracehub/bus';
import {
  isProtocol,
  LinkSettingsError,
  linkSettingsFromText,
  linkSettingsSchema,
  type Protocol,
  validateLinkSettings,
} from '@tracehub/contracts';
import {
  type Database,
  type LinkSettingsChangeRow,
  latestSession,
  linkSettingsChanges,
  setLinkSettings,
} from '@tracehub/db';
import { DictionaryFileError, parseDictionaryFile } from '@tracehub/qs';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { linkRoute, mustGetLink } from './link-route.js';

export interface LinkSettingsRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  /** How long to wait for the link's gateway to start a new session (`apply: 'now'`), ms. */
  timeoutMs: number;
}

const changeOf = (row: LinkSettingsChangeRow) => ({
  at: row.changed_at.toISOString(),
  by: row.changed_by,
  via: row.via,
  applies: row.applies,
  previous: row.previous,
  settings: row.settings,
});

/** What a setting takes, in the words of its schema: `1, 2, 4 or 8`, `0..255`, `list of 0..65535`. */
function takes(property: TSchema): string {
  if (Array.isArray(property.anyOf)) {
    const values = (property.anyOf as TSchema[]).map((p) => String(p.const));
    return `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
  }
  if (property.type === 'array') return `list of ${takes(property.items as TSchema)}, e.g. 17,0x12`;
  if (property.type === 'integer' || property.type === 'number') {
    return `${property.type === 'number' ? 'number ' : ''}${property.minimum}..${property.maximum}`;
  }
  return 'text';
}

function settingNames(protocol: Protocol): SettingName[] {
  return Object.entries(linkSettingsSchema(protocol).properties).map(([name, property]) => ({
    name,
    // qspy's -v takes the dotted form, and so does the text form of the QS version.
    takes: protocol === 'qs' && name === 'version' ? '7.4.0 or 740' : takes(property),
    description: String(property.description ?? ''),
  }));
}

/**
 * The link's stored document when a session started: the newest change made by then, or
 * before any change the document the oldest change replaced (the decoder reads it as the
 * session's first chunk comes, moments after the start).
 */
function storedAt(current: Record<string, unknown>, history: LinkSettingsChangeRow[], at: Date) {
  const before = history.find((c) => c.changed_at <= at);
  if (before) return before.settings;
  return history.length > 0 ? history[history.length - 1].previous : current;
}

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
    linkRoute({
      summary: "A link's settings document and who changed it when",
      tags: ['links'],
      response: { 200: LinkSettingsReply },
    }),
    async (request) => {
      const link = await mustGetLink(db, request.params.id);
      const [history, latest] = await Promise.all([
        linkSettingsChanges(db, link.id),
        latestSession(db, link.rig, link.name),
      ]);
      let inUse: SettingsInUse | null = null;
      if (latest) {
        const stored = storedAt(link.settings, history, latest.started_at);
        const fromAddress = latest.link_settings ?? {};
        inUse = {
          session: latest.id,
          startedAt: latest.started_at.toISOString(),
          settings: { ...stored, ...fromAddress },
          stored,
          fromAddress,
        };
      }
      return {
        linkId: link.id,
        protocol: link.protocol,
        settings: link.settings,
        accepts: isProtocol(link.protocol) ? settingNames(link.protocol) : [],
        inUse,
        history: history.map(changeOf),
      };
    },
  );

  app.put(
    '/links/:id/settings',
    linkRoute(
      {
        summary: "Replace a link's settings document",
        description:
          "Validated against the link protocol's settings; kept with who made the change and when. Applies from the link's next session, or at once with `apply: 'now'`.",
        tags: ['links'],
        body: LinkSettingsPut,
        response: { 200: LinkSettingsPutReply },
      },
      'control',
    ),
    async (request) => {
      const link = await mustGetLink(db, request.params.id);
      if (!isProtocol(link.protocol))
        throw httpErrors.badRequest(`link ${link.id} has an unknown protocol '${link.protocol}'`);
      let document = request.body.settings;
      if (request.body.text) {
        try {
          document = { ...document, ...linkSettingsFromText(link.protocol, Object.entries(request.body.text)) };
        } catch (error) {
          if (error instanceof LinkSettingsError) throw httpErrors.badRequest(error.message);
          throw error;
        }
      }
      let settings: Record<string, unknown>;
      try {
        settings = validateLinkSettings(link.protocol, document) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof LinkSettingsError) throw httpErrors.badRequest(`body.settings: ${error.message}`);
        throw error;
      }
      // A .dic the decoder could not read would only be found at the next session: read it now.
      if (typeof settings.dictionaries === 'string') {
        try {
          parseDictionaryFile(settings.dictionaries);
        } catch (error) {
          if (error instanceof DictionaryFileError) {
            throw httpErrors.badRequest(
              `body.settings.dictionaries: not a .dic file qspy would read: ${error.message}`,
            );
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
