// A reader for the GraphQL documents MLflow's UI and clients send: operations (query or mutation), fields with
// aliases, arguments and directives, nested selections, fragments and inline fragments, variables. Types in
// variable definitions are read and ignored: the executor checks what it needs.

export type GqlValue = string | number | boolean | null | GqlValue[] | { [k: string]: GqlValue } | { variable: string };

export type Field = { kind: 'field'; alias: string | undefined; name: string; args: Record<string, GqlValue>; selections: Selection[] };
export type Selection = Field | { kind: 'spread'; name: string } | { kind: 'inline'; selections: Selection[] };
export type Operation = { name: string | undefined; type: 'query' | 'mutation' | 'subscription'; selections: Selection[] };
export type Document = { operations: Operation[]; fragments: Map<string, Selection[]> };

export class GraphqlSyntaxError extends Error {}

type Token = { kind: 'punct' | 'name' | 'string' | 'number' | 'end'; text: string; at: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/[\s,\uFEFF]/.test(ch)) {
      i++;
    } else if (ch === '#') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (source.startsWith('...', i)) {
      tokens.push({ kind: 'punct', text: '...', at: i });
      i += 3;
    } else if ('{}()[]:!$@=|&'.includes(ch)) {
      tokens.push({ kind: 'punct', text: ch, at: i++ });
    } else if (/[_A-Za-z]/.test(ch)) {
      const m = /^[_A-Za-z][_0-9A-Za-z]*/.exec(source.slice(i))!;
      tokens.push({ kind: 'name', text: m[0], at: i });
      i += m[0].length;
    } else if (/[-0-9]/.test(ch)) {
      const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(i));
      if (!m) throw new GraphqlSyntaxError(`Syntax Error: Invalid number at ${i}.`);
      tokens.push({ kind: 'number', text: m[0], at: i });
      i += m[0].length;
    } else if (source.startsWith('"""', i)) {
      const end = source.indexOf('"""', i + 3);
      if (end < 0) throw new GraphqlSyntaxError('Syntax Error: Unterminated string.');
      tokens.push({ kind: 'string', text: source.slice(i + 3, end), at: i });
      i = end + 3;
    } else if (ch === '"') {
      let j = i + 1;
      let text = '';
      for (; j < source.length && source[j] !== '"'; j++) {
        if (source[j] === '\\') {
          const next = source[++j];
          if (next === 'u') {
            text += String.fromCharCode(parseInt(source.slice(j + 1, j + 5), 16));
            j += 4;
          } else text += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[next!] ?? next;
        } else text += source[j];
      }
      if (j >= source.length) throw new GraphqlSyntaxError('Syntax Error: Unterminated string.');
      tokens.push({ kind: 'string', text, at: i });
      i = j + 1;
    } else {
      throw new GraphqlSyntaxError(`Syntax Error: Unexpected character "${ch}".`);
    }
  }
  tokens.push({ kind: 'end', text: '', at: source.length });
  return tokens;
}

export function parseDocument(source: string): Document {
  const tokens = tokenize(source);
  let i = 0;
  const peek = () => tokens[i]!;
  const next = () => tokens[i++]!;
  const fail = (t: Token, what: string): never => {
    throw new GraphqlSyntaxError(`Syntax Error: Expected ${what}, found ${t.kind === 'end' ? '<EOF>' : `"${t.text}"`}.`);
  };
  const expect = (text: string) => (peek().kind === 'punct' && peek().text === text ? next() : fail(peek(), `"${text}"`));
  const is = (text: string) => peek().kind === 'punct' && peek().text === text;
  const name = () => (peek().kind === 'name' ? next().text : fail(peek(), 'Name'));

  const value = (): GqlValue => {
    const t = next();
    if (t.kind === 'punct' && t.text === '$') return { variable: name() };
    if (t.kind === 'string') return t.text;
    if (t.kind === 'number') return Number(t.text);
    if (t.kind === 'name') return t.text === 'true' ? true : t.text === 'false' ? false : t.text === 'null' ? null : t.text;
    if (t.kind === 'punct' && t.text === '[') {
      const list: GqlValue[] = [];
      while (!is(']')) list.push(value());
      next();
      return list;
    }
    if (t.kind === 'punct' && t.text === '{') return namedValues('}');
    return fail(t, 'a value');
  };
  // `name: value` pairs up to `close` (an input object's fields, a field's arguments); entries, not assignments, so
  // that a name such as __proto__ stays a name
  const namedValues = (close: string): Record<string, GqlValue> => {
    const entries: [string, GqlValue][] = [];
    while (!is(close)) {
      const key = name();
      expect(':');
      entries.push([key, value()]);
    }
    next();
    return Object.fromEntries(entries);
  };
  const args = (): Record<string, GqlValue> => {
    if (!is('(')) return {};
    next();
    return namedValues(')');
  };
  const directives = () => {
    while (is('@')) {
      next();
      name();
      args();
    }
  };
  const typeRef = (): void => {
    if (is('[')) {
      next();
      typeRef();
      expect(']');
    } else name();
    if (is('!')) next();
  };
  const selectionSet = (): Selection[] => {
    expect('{');
    const out: Selection[] = [];
    while (!is('}')) {
      if (is('...')) {
        next();
        if (peek().kind === 'name' && peek().text !== 'on') {
          out.push({ kind: 'spread', name: name() });
          directives();
        } else {
          if (peek().kind === 'name' && peek().text === 'on') {
            next();
            name();
          }
          directives();
          out.push({ kind: 'inline', selections: selectionSet() });
        }
        continue;
      }
      let fieldName = name();
      let alias: string | undefined;
      if (is(':')) {
        next();
        alias = fieldName;
        fieldName = name();
      }
      const fieldArgs = args();
      directives();
      out.push({ kind: 'field', alias, name: fieldName, args: fieldArgs, selections: is('{') ? selectionSet() : [] });
    }
    next();
    if (out.length === 0) fail(peek(), 'a selection');
    return out;
  };

  const doc: Document = { operations: [], fragments: new Map() };
  while (peek().kind !== 'end') {
    if (is('{')) {
      doc.operations.push({ name: undefined, type: 'query', selections: selectionSet() });
      continue;
    }
    const keyword = name();
    if (keyword === 'fragment') {
      const fragment = name();
      if (name() !== 'on') fail(tokens[i - 1]!, '"on"');
      name();
      directives();
      doc.fragments.set(fragment, selectionSet());
    } else if (keyword === 'query' || keyword === 'mutation' || keyword === 'subscription') {
      const opName = peek().kind === 'name' ? name() : undefined;
      if (is('(')) {
        next();
        while (!is(')')) {
          expect('$');
          name();
          expect(':');
          typeRef();
          if (is('=')) {
            next();
            value();
          }
          directives();
        }
        next();
      }
      directives();
      doc.operations.push({ name: opName, type: keyword, selections: selectionSet() });
    } else {
      fail(tokens[i - 1]!, 'a definition');
    }
  }
  return doc;
}
