// GET /docs: the OpenAPI document as one HTML page, rendered on the server. Scalar's reference page needs an inline
// script and inline styles (and its bundle from a CDN or a few MB served here), which the platform's CSP
// (web/pages.ts: 'self' only, no inline anything) refuses; this page needs neither script nor style.

type Json = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const html = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
const code = (value: unknown) => `<pre><code>${html(JSON.stringify(value, null, 2))}</code></pre>`;
const anchor = (method: string, path: string) => `${method}-${path.replace(/[^A-Za-z0-9]+/g, '-')}`;

function operation(method: string, path: string, op: Json): string {
  const params = (op.parameters as Json[] | undefined) ?? [];
  const body = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  const responses = Object.entries((op.responses as Record<string, Json>) ?? {});
  return [
    `<section id="${anchor(method, path)}"><h2>${method.toUpperCase()} ${html(path)}</h2>`,
    op.summary ? `<p>${html(String(op.summary))}</p>` : '',
    op.description ? `<p>${html(String(op.description))}</p>` : '',
    params.length
      ? `<h3>Parameters</h3><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>${params
          .map(
            (p) =>
              `<tr><td>${html(String(p.name))}</td><td>${html(String(p.in))}</td><td>${p.required ? 'yes' : 'no'}</td><td>${code(p.schema)}</td></tr>`,
          )
          .join('')}</table>`
      : '',
    body
      ? `<h3>Request body</h3>${Object.entries(body)
          .map(([type, media]) => `<p>${html(type)}</p>${code(media.schema)}`)
          .join('')}`
      : '',
    `<h3>Responses</h3><dl>${responses
      .map(([status, r]) => {
        const ref = typeof r.$ref === 'string' ? r.$ref.split('/').pop() : undefined;
        const content = (r.content as Record<string, { schema?: unknown }> | undefined) ?? {};
        return `<dt>${html(status)}</dt><dd>${ref ? `problem+json: <a href="#response-${html(ref)}">${html(ref)}</a>` : html(String(r.description ?? ''))}${Object.entries(
          content,
        )
          .map(([type, media]) => `<p>${html(type)}</p>${code(media.schema)}`)
          .join('')}</dd>`;
      })
      .join('')}</dl></section>`,
  ].join('\n');
}

export function renderDocsPage(document: Json): string {
  const info = document.info as { title: string; version: string; description?: string };
  const paths = Object.entries((document.paths as Record<string, Json>) ?? {});
  const ops = paths.flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ method: m, path, op: item[m] as Json })));
  const components = (document.components as Record<string, Record<string, unknown>>) ?? {};
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${html(info.title)} API</title></head>
<body>
<h1>${html(info.title)} ${html(info.version)}</h1>
<p>${html(info.description ?? '')} The machine-readable document: <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p>
<nav><ul>${ops.map(({ method, path }) => `<li><a href="#${anchor(method, path)}">${method.toUpperCase()} ${html(path)}</a></li>`).join('')}</ul></nav>
${ops.map(({ method, path, op }) => operation(method, path, op)).join('\n')}
<section><h2>Authentication</h2>${code(components.securitySchemes ?? {})}<p>Any one of:</p>${code(document.security ?? [])}</section>
<section><h2>Error responses</h2>${Object.entries(components.responses ?? {})
    .map(([name, r]) => `<h3 id="response-${html(name)}">${html(name)}</h3><p>${html(String((r as Json).description ?? ''))}</p>`)
    .join('')}${code((components.schemas ?? {}).Problem)}</section>
<section><h2>Schemas</h2>${Object.entries(components.schemas ?? {})
    .map(([name, schema]) => `<h3 id="schema-${html(name)}">${html(name)}</h3>${code(schema)}`)
    .join('')}</section>
</body>
</html>
`;
}
