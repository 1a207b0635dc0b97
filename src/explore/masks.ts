import type { CatalogEntry } from './catalog.ts';
import type { TableMasks } from './sql/index.ts';

// The tables read through a mask for a caller who may not see personal data (sql/engine-statement.ts).

export const NO_MASKS: TableMasks = new Map();
const masksOfCatalog = new WeakMap<CatalogEntry[], TableMasks>();
/** Each catalog table with personal columns, with its columns in order; built once per catalog read. */
export function tableMasks(entries: CatalogEntry[]): TableMasks {
  let masks = masksOfCatalog.get(entries);
  if (!masks) {
    masks = new Map(
      entries
        .filter((e) => e.columns.some((c) => c.tags.includes('pii')))
        .map((e) => [
          e.fqn,
          { columns: e.columns.map((c) => c.name), personal: new Set(e.columns.filter((c) => c.tags.includes('pii')).map((c) => c.name)) },
        ]),
    );
    masksOfCatalog.set(entries, masks);
  }
  return masks;
}
