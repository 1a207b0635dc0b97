// MLflow's search grammar on the tracker schema: one parser (filter.ts over lexer.ts), one SQL statement per page.
export { searchRuns, type SearchRunsRequest, type ViewType } from './runs.ts';
export { searchExperiments, type SearchExperimentsRequest } from './experiments.ts';
export { searchLoggedModels, type LoggedModelDataset, type LoggedModelOrder, type SearchLoggedModelsRequest } from './logged-models.ts';
export { searchModelVersions, searchRegisteredModels, type RegistrySearchRequest } from './registry.ts';
export { parseFilter, parseOrderBy, type Comparison, type Identifier, type OrderClause, type Value } from './filter.ts';
export { MAX_RESULTS } from './paging.ts';
