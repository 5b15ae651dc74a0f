import { AjvCompiler } from '@fastify/ajv-compiler';
import { httpErrors } from '@fastify/sensible';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

/*
 * One rule for every number a request carries, applied where requests are validated (the
 * schema compiler), not route by route:
 * - in the query string and the path, a number is decimal digits (an integer field: `-?[0-9]+`;
 *   a number field may have a decimal fraction): no exponent (`1e309` is Infinity), no hex
 *   (`0x10`), no blank; then within the field's range;
 * - in a JSON body a number is a JSON number, finite (`1e309` parses to Infinity) and within the
 *   field's range; a string is never read as a number there (fields that take numbers as text,
 *   such as a 64-bit address, say so in their schema).
 * Anything else is a 400 naming the field and its range.
 */

type BuildValidator = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildValidator'];
type ExternalSchemas = Parameters<NonNullable<BuildValidator>>[0];
type AjvOptions = Parameters<ReturnType<typeof AjvCompiler>>[1];

export interface NumericSchema {
  type?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: NumericSchema;
  properties?: Record<string, NumericSchema>;
}

/** One failed field, shaped as Ajv reports one (so the problem reply words it as any other). */
export interface FieldIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** Ajv options of the rule: Infinity and NaN are not numbers of any field. */
const STRICT = { strictNumbers: true, verbose: true } as const;

const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

export function isNumeric(schema: NumericSchema | undefined): boolean {
  return schema?.type === 'integer' || schema?.type === 'number';
}

/** What a numeric field takes, in words: "an integer from 1 to 1000". */
export function numericRange(schema: NumericSchema): string {
  const what = schema.type === 'integer' ? 'an integer' : 'a number';
  // An inclusive bound, else an exclusive one, else none.
  const bound = (inclusive: number | undefined, exclusive: number | undefined, words: [string, string]) =>
    inclusive !== undefined ? `${words[0]} ${inclusive}` : exclusive !== undefined ? `${words[1]} ${exclusive}` : '';
  const low = bound(schema.minimum, schema.exclusiveMinimum, ['from', 'above']);
  const high = bound(schema.maximum, schema.exclusiveMaximum, ['to', 'below']);
  return [what, low, high].filter((part) => part !== '').join(' ');
}

/** Whether `value` is within the schema's bounds (and a whole number where it must be). */
function inRange(schema: NumericSchema, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (schema.type === 'integer' && !Number.isSafeInteger(value)) return false;
  if (schema.minimum !== undefined && value < schema.minimum) return false;
  if (schema.maximum !== undefined && value > schema.maximum) return false;
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return false;
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return false;
  return true;
}

/** Whether a query or path value is a number the field takes: decimal text within its range. */
function isDecimalInRange(schema: NumericSchema, raw: unknown): boolean {
  if (typeof raw !== 'string') return typeof raw === 'number' && inRange(schema, raw);
  return (schema.type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(raw) && inRange(schema, Number(raw));
}

/**
 * The numeric fields of a query string or path schema that hold text not taken as their number,
 * as issues (the first one): a field of numbers (`type`), or a list of them (`?type=1&type=2`).
 */
export function decimalIssue(schema: NumericSchema, data: unknown): FieldIssue | undefined {
  if (!schema.properties || typeof data !== 'object' || data === null) return undefined;
  const values = data as Record<string, unknown>;
  for (const [name, field] of Object.entries(schema.properties)) {
    const raw = values[name];
    if (raw === undefined) continue;
    const numeric = isNumeric(field)
      ? field
      : field.type === 'array' && isNumeric(field.items)
        ? field.items
        : undefined;
    if (!numeric) continue;
    const list = Array.isArray(raw) ? raw : [raw];
    if (list.every((item) => isDecimalInRange(numeric, item))) continue;
    return {
      keyword: 'decimal',
      instancePath: `/${name}`,
      params: { range: numericRange(numeric) },
      message: `must be ${numericRange(numeric)} in decimal digits${field === numeric ? '' : ' (each of the list)'}`,
    };
  }
  return undefined;
}

type Validate = ((data: unknown, context?: unknown) => boolean) & { errors?: unknown; schemaEnv?: unknown };

/** `validate` behind the decimal rule for the query string and the path. */
function decimalFirst(schema: NumericSchema, validate: Validate): Validate {
  const checked: Validate = (data, context) => {
    const issue = decimalIssue(schema, data);
    if (issue) {
      checked.errors = [issue];
      return false;
    }
    const valid = validate(data, context);
    checked.errors = validate.errors;
    return valid;
  };
  // Fastify passes the request as the parent of the data when Ajv compiled the function.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

const pool = AjvCompiler();

/**
 * Fastify's `schemaController.compilersFactory.buildValidator`: Fastify's own Ajv compiler with
 * the rule above: the query string and the path coerced from text after the decimal check,
 * JSON bodies not coerced at all, and no Infinity anywhere.
 */
const build = (externalSchemas: ExternalSchemas, options: AjvOptions) => {
  const customOptions = { ...options?.customOptions, ...STRICT };
  const coercing = pool(externalSchemas as never, { ...options, customOptions } as AjvOptions);
  const exact = pool(
    externalSchemas as never,
    { ...options, customOptions: { ...customOptions, coerceTypes: false } } as AjvOptions,
  );
  return (route: { schema: unknown; httpPart?: string }) => {
    // Fastify's compiler takes the route definition, whatever its declared type says.
    if (route.httpPart === 'body') return exact(route as never);
    return decimalFirst(route.schema as NumericSchema, coercing(route as never) as unknown as Validate);
  };
};
/** Typed as Fastify declares the factory (its declaration has compilers take a schema; they take the route). */
export const buildRequestValidator = build as unknown as BuildValidator;

/**
 * A `preValidation` hook: a request with no body, on a route whose body schema is an object, is
 * validated as `{}`. So a route that takes an empty or all-optional body has a schema for it like
 * any other (Fastify's validation would refuse a missing body as "not an object"), while a body
 * of JSON `null`, `[]` or `"x"` is still refused by the schema.
 */
export async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
}

/**
 * Refuses text holding a NUL byte anywhere in the query, the path or a JSON body, with a 400
 * naming where: Postgres stores no NUL in text or JSON, so such a value could only fail later,
 * as a 500. One rule for every route, as for numbers (fields that carry bytes take base64 or hex).
 */
export async function refuseNulText(request: FastifyRequest): Promise<void> {
  const where =
    nulPath(request.params, 'path') ?? nulPath(request.query, 'querystring') ?? nulPath(request.body, 'body');
  if (where) throw httpErrors.badRequest(`${where}: text must not hold a NUL byte (\\u0000)`);
}

/**
 * Where a string with a NUL is in `value` (`body condition.name`), or undefined. Walked with a
 * stack, to any depth: a body field that takes any JSON (link settings) could hide one deep.
 */
function nulPath(value: unknown, at: string): string | undefined {
  const stack: Array<{ value: unknown; at: string; top: boolean }> = [{ value, at, top: true }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.value === 'string') {
      if (next.value.includes('\u0000')) return next.at;
      continue;
    }
    if (next.value === null || typeof next.value !== 'object') continue;
    for (const [key, item] of Object.entries(next.value)) {
      if (key.includes('\u0000')) return `${next.at} key`;
      stack.push({ value: item, at: next.top ? `${next.at} ${key}` : `${next.at}.${key}`, top: false });
    }
  }
  return undefined;
}
