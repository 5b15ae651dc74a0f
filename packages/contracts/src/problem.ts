import { type Static, Type } from '@sinclair/typebox';

/**
 * RFC 9457 problem details: the body of every error an HTTP service here answers with
 * (`application/problem+json`). `detail` is one sentence that names what was wrong and what
 * to send instead.
 */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
  },
  { description: 'RFC 9457 problem details (application/problem+json)' },
);
export type Problem = Static<typeof ProblemSchema>;

/** The problem answers every authenticated route may give, for a route's `response` schema. */
export const problemResponses = {
  400: ProblemSchema,
  401: ProblemSchema,
  403: ProblemSchema,
  404: ProblemSchema,
} as const;
