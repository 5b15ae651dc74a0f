import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { TraceRecordSchema } from '@tracehub/contracts';

/** RFC 3339 date-time, the one string format the replies use (TypeBox knows no format of itself). */
const DATE_TIME = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;
if (!FormatRegistry.Has('date-time'))
  FormatRegistry.Set('date-time', (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));

/**
 * What is wrong with `value` as a reply of `schema` (the first few problems, each as `path:
 * message`), none when it fits. The schemas referred to by id (the TraceRecord) are known.
 * For a client that wants to know the server speaks this contract, and for the tests that
 * hold the API's replies to it.
 */
export function replyProblems(schema: TSchema, value: unknown, most = 10): string[] {
  const problems: string[] = [];
  for (const error of Value.Errors(schema, [TraceRecordSchema], value)) {
    problems.push(`${error.path || '/'}: ${error.message}`);
    if (problems.length >= most) break;
  }
  return problems;
}
