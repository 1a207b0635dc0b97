import { forbidden } from '../../platform/errors.ts';
import { bypassesRedaction, DEFAULT_TAGS_FILE, loadCatalogTags, personalColumnsOf } from '../../platform/catalog-tags.ts';
import type { Caller } from '../../platform/identity.ts';
import { explainIo, relationsRead } from '../../platform/trino/index.ts';
import type { Lake } from '../backends/lake.ts';
import * as sql from './statements.ts';

// An import would copy what it embeds into the lake, where explore's redaction no longer stands between the value and
// whoever reads the collection: a column tagged `pii` (SVC_CATALOG_TAGS_FILE) is refused unless the caller reads
// personal data unmasked (SVC_PII_BYPASS_ROLES, explore's rule). A column counts as read when its name is a word of
// the text, the key, the metadata or the source statement, in a table Trino says the source reads.

export async function refusePersonalColumns(
  settings: { CATALOG_TAGS_FILE?: string | undefined; PII_BYPASS_ROLES: readonly string[] },
  lake: Lake,
  caller: Caller,
  spec: sql.ImportSpec,
): Promise<void> {
  if (bypassesRedaction(caller.roles, settings.PII_BYPASS_ROLES)) return;
  const tags = await loadCatalogTags(settings.CATALOG_TAGS_FILE ?? DEFAULT_TAGS_FILE);
  const isTable = sql.isTableSource(spec.source);
  const tables = isTable
    ? [spec.source.toLowerCase()]
    : relationsRead(String((await lake.asCaller(caller, explainIo(sql.countRows(spec)))).rows[0]?.[0] ?? '{}'));
  const words = new Set(
    [spec.text, spec.key, ...spec.metadata, ...(isTable ? [] : [spec.source])].flatMap(
      (s) => s.toLowerCase().match(/[a-z_][a-z0-9_$]*/g) ?? [],
    ),
  );
  const read = tables.flatMap((t) =>
    personalColumnsOf(tags, t)
      .filter((c) => words.has(c))
      .map((c) => `${t}.${c}`),
  );
  if (read.length > 0)
    throw forbidden(
      `The import would embed personal data (${read.join(', ')}), which your roles see only masked; import other columns, or ask someone whose role reads them unmasked (SVC_PII_BYPASS_ROLES).`,
    );
}
