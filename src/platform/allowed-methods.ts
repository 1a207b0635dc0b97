// A request whose path is served, but not for its method, is 405 with the methods that are (RFC 9110 §15.5.6), not a
// 404 that says the resource is missing. Hono keeps every route of an app, mounted ones included, in `app.routes`.

type Route = { method: string; path: string };

/** Hono's path syntax (`:id`, `:id{[0-9]+}`, `*`) as an anchored regular expression. */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((part) => {
      if (part === '*') return '.*';
      const param = /^:[^{?]+(?:\{(.+)\})?(\?)?$/.exec(part);
      if (param) return param[1] ? `(?:${param[1]})` : '[^/]+';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/** The methods the app serves at `path`, HEAD wherever GET is; empty when no route has the path. */
export function allowedMethods(routes: readonly Route[]): (path: string) => string[] {
  const patterns = routes.filter((r) => r.method !== 'ALL').map((r) => ({ method: r.method, pattern: pathPattern(r.path) }));
  return (path) => {
    const methods = new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
