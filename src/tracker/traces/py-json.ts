import type { AnyValue, Attribute } from './otlp.ts';

// MLflow keeps every span attribute as the text Python's json.dumps makes of its value (", " and ": " between
// items, a double always with a fraction, non-ASCII left as it is). The trace artifact and the previews carry that
// text, so it is written here from the typed AnyValue, where an integer and a double are still told apart.

function pyDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n}.0`;
  return String(n).replace(/e\+?/, 'e+').replace('e+-', 'e-');
}

/** json.dumps of a plain JSON value (what a decoded attribute is made of). */
export function pyDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyDouble(value);
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${JSON.stringify(k)}: ${pyDumps(v)}`)
    .join(', ')}}`;
}

/** json.dumps of the value an AnyValue carries, keeping a double a double. */
export function dumpAnyValue(v: AnyValue | undefined): string {
  if (!v) return 'null';
  if ('stringValue' in v) return JSON.stringify(v.stringValue ?? '');
  if ('boolValue' in v) return v.boolValue ? 'true' : 'false';
  if ('intValue' in v) return String(v.intValue);
  if ('doubleValue' in v) return pyDouble(Number(v.doubleValue));
  if ('bytesValue' in v) return JSON.stringify(v.bytesValue);
  if ('arrayValue' in v) return `[${(((v.arrayValue as any)?.values ?? []) as AnyValue[]).map(dumpAnyValue).join(', ')}]`;
  if ('kvlistValue' in v) {
    const kvs = ((v.kvlistValue as any)?.values ?? []) as Attribute[];
    return `{${kvs.map((kv) => `${JSON.stringify(kv.key)}: ${dumpAnyValue(kv.value)}`).join(', ')}}`;
  }
  return 'null';
}
