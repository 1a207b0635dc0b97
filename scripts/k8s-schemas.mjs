// Writes one strict, self-contained JSON schema per Kubernetes kind from the API server's OpenAPI (v2) document, in
// the file layout kubeconform's -schema-location template expects ({{.ResourceKind}}{{.KindSuffix}}.json, e.g.
// deployment-apps-v1.json, service-v1.json, networkpolicy-networking-v1.json).
//   node scripts/k8s-schemas.mjs <kubernetes module>/api/openapi-spec/swagger.json <output dir>
// Strict: an object with declared properties accepts no other ones, so a misspelt or misplaced field fails.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [source, out] = process.argv.slice(2);
if (!source || !out) {
  console.error('usage: node scripts/k8s-schemas.mjs <swagger.json> <output dir>');
  process.exit(2);
}
const definitions = JSON.parse(readFileSync(source, 'utf8')).definitions;

/** A schema as kubeconform should see it: strict objects, and the two string types that YAML also writes as numbers. */
function tighten(schema) {
  if (Array.isArray(schema)) return schema.map(tighten);
  if (!schema || typeof schema !== 'object') return schema;
  if (schema.format === 'int-or-string') return { description: schema.description, oneOf: [{ type: 'string' }, { type: 'integer' }] };
  const copy = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = key === 'properties' ? mapValues(value, tighten) : tighten(value);
  if (copy.properties && copy.additionalProperties === undefined && !copy['x-kubernetes-preserve-unknown-fields'])
    copy.additionalProperties = false;
  return copy;
}
const mapValues = (object, fn) => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(v)]));

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const special = { [QUANTITY]: { oneOf: [{ type: 'string' }, { type: 'number' }] } };
const tightened = {};
for (const name of Object.keys(definitions)) tightened[name] = special[name] ?? tighten(definitions[name]);

/** The definitions a schema refers to, directly or not, so each file stands alone. */
function reachable(name, seen = new Set()) {
  if (seen.has(name)) return seen;
  seen.add(name);
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') reachable(node.$ref.replace('#/definitions/', ''), seen);
    Object.values(node).forEach(visit);
  };
  visit(tightened[name]);
  return seen;
}

mkdirSync(out, { recursive: true });
let written = 0;
for (const [name, schema] of Object.entries(definitions)) {
  for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
    // kubeconform's KindSuffix: "-" + the first label of the group (none for core) + "-" + version.
    const suffix = gvk.group ? `-${gvk.group.split('.')[0]}-${gvk.version}` : `-${gvk.version}`;
    const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    // A kind that refers to itself keeps its own entry too.
    const refs = [...reachable(name)];
    const file = {
      ...tightened[name],
      properties: {
        ...tightened[name].properties,
        apiVersion: { type: 'string', enum: [apiVersion] },
        kind: { type: 'string', enum: [gvk.kind] },
      },
      definitions: Object.fromEntries(refs.map((r) => [r, tightened[r]])),
    };
    writeFileSync(join(out, `${gvk.kind.toLowerCase()}${suffix.toLowerCase()}.json`), JSON.stringify(file));
    written++;
  }
}
console.error(`wrote ${written} schemas to ${out}`);
