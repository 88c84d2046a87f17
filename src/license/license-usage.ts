import type { Catalog } from '../catalog/catalog.ts';
import type { Usage } from './license-validations.ts';

/** What the counted entitlements are checked against: resources in the catalog now. */
export function usageFromCatalog(catalog: Catalog): Usage {
  const count = (kind: string) => catalog.list(kind).length;
  return {
    max_streams: count('stream'),
    max_views: count('view'),
    max_users: count('user'),
    max_dashboards: count('dashboard'),
    max_saved_queries: count('saved_query'),
    max_pipelines: count('pipeline'),
  };
}
