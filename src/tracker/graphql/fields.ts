import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLError,
  type GraphQLFieldConfigMap,
  type GraphQLFieldResolver,
  GraphQLInputObjectType,
  type GraphQLInputType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLScalarType,
  GraphQLString,
  getNamedType,
  getNullableType,
  isListType,
  Kind,
} from 'graphql';
import type { GraphqlContext } from './context.ts';

// How the schema's fields read the tracker's answers, which are MLflow's JSON: as protobuf reads a message, an
// absent list is empty, an absent text the empty string, an absent 64-bit integer 0; those are LongString (a string,
// so JavaScript keeps every digit), and a metric's NaN is null. The builders of object and input types in that style.

export type Resolver = GraphQLFieldResolver<unknown, GraphqlContext>;

export const LongString = new GraphQLScalarType({
  name: 'LongString',
  description: 'LongString Scalar type to prevent truncation to max integer in JavaScript.',
  serialize: (value) => String(value),
  // an input is checked by the request message's int64 field, in MLflow's words
  parseValue: (value) => {
    if (typeof value !== 'string' && typeof value !== 'number') throw new GraphQLError('LongString must be an integer or a string of one');
    return value;
  },
  parseLiteral: (node) => (node.kind === Kind.INT || node.kind === Kind.STRING ? node.value : undefined),
});

export const enumOf = (name: string, values: string[]) =>
  new GraphQLEnumType({ name, values: Object.fromEntries(values.map((v) => [v, { value: v }])) });
/** MLflow's repeated message field: a list of non-null items. */
export const listOf = (type: GraphQLOutputType) => new GraphQLList(new GraphQLNonNull(type));

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function snakeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snakeKeys);
  // entries, not assignments: a key such as __proto__ stays a key
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), snakeKeys(x)]));
  return v;
}

/** A field of an answer, by its GraphQL (camelCase) or MLflow JSON (snake_case) name; only the object's own. */
export function fieldOf(source: unknown, name: string): unknown {
  if (!source || typeof source !== 'object') return undefined;
  const s = source as Record<string, unknown>;
  if (Object.hasOwn(s, name)) return s[name];
  return Object.hasOwn(s, snake(name)) ? s[snake(name)] : undefined;
}

/** Every field without a resolver of its own: the value as protobuf would read it from the message. */
export const protoField: Resolver = (source, _args, _context, info) => {
  const value = fieldOf(source, info.fieldName);
  if (value !== undefined && value !== null) return value;
  if (isListType(getNullableType(info.returnType))) return [];
  const named = getNamedType(info.returnType);
  if (named === GraphQLString) return '';
  if (named === LongString) return '0';
  if (named === GraphQLBoolean) return false;
  return null;
};

/** A metric's value: protobuf's JSON writes NaN and the infinities as strings, which a Float cannot be. */
export const metricValue: Resolver = (source) => {
  const value = fieldOf(source, 'value');
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

export type Fields = Record<string, GraphQLOutputType | { type: GraphQLOutputType; resolve: Resolver }>;
export const object = (name: string, fields: () => Fields) =>
  new GraphQLObjectType<unknown, GraphqlContext>({
    name,
    fields: () =>
      Object.fromEntries(Object.entries(fields()).map(([key, f]) => [key, 'resolve' in f ? f : { type: f }])) as GraphQLFieldConfigMap<
        unknown,
        GraphqlContext
      >,
  });
export const input = (name: string, fields: Record<string, GraphQLInputType>) =>
  new GraphQLInputObjectType({ name, fields: () => Object.fromEntries(Object.entries(fields).map(([k, type]) => [k, { type }])) });
export const keyValue = (name: string) => object(name, () => ({ key: GraphQLString, value: GraphQLString }));
