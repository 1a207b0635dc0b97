// The architecture, checked (scripts/check-imports.sh, in CI): src/platform is shared and imports no service; a
// service never imports another; no import cycles, except the SQL grammar's own recursion in explore's lineage
// (a query holds expressions that hold queries). The dashboards runtime is a workspace of its own
// (dashboards-runtime/): it reaches shared code only through @svc/platform's exports, and nothing it loads, even
// as a type, talks to a database, a model or Trino.
const SERVICES = ['retrieval', 'explore', 'tracker'];
const RUNTIME = '^dashboards-runtime/';
const RUNTIME_FORBIDDEN = [
  '^src/(retrieval|explore|tracker)/',
  '^src/platform/(db|gateway)/',
  '^src/main\\.ts$',
  '^src/[a-z-]+-command\\.ts$',
  '^src/platform/(launcher|service)\\.ts$',
  'node_modules/(postgres|@electric-sql/pglite|openai|trino-client|pgvector)/',
];

module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-service',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: [`^src/(${SERVICES.join('|')})/`, RUNTIME] },
    },
    ...SERVICES.map((service) => ({
      name: `${service}-imports-no-other-service`,
      severity: 'error',
      from: { path: `^src/${service}/` },
      to: { path: [`^src/(${SERVICES.filter((s) => s !== service).join('|')})/`, RUNTIME] },
    })),
    {
      // Relative paths into src/ would bypass the package's exports: the runtime names @svc/platform/<module>.
      name: 'runtime-reaches-platform-through-its-package',
      severity: 'error',
      from: { path: RUNTIME },
      to: { path: '^src/', dependencyTypes: ['local'] },
    },
    {
      name: 'runtime-loads-no-database-model-trino-or-service',
      comment: "Anything in the runtime's transitive closure: its image holds none of these.",
      severity: 'error',
      from: { path: `${RUNTIME}src/` },
      to: { path: RUNTIME_FORBIDDEN, reachable: true },
    },
    {
      name: 'runtime-tests-load-no-database-model-trino-or-service',
      severity: 'error',
      from: { path: `${RUNTIME}tests/` },
      to: { path: RUNTIME_FORBIDDEN, reachable: true },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      from: { pathNot: '^src/explore/sql/lineage/' },
      to: { circular: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // node_modules is not followed, except the packages the runtime must not reach (so the rule above sees them).
    doNotFollow: { path: 'node_modules' },
    // package.json `exports` (hono/cookie, @svc/platform/http), as Node resolves them
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default', 'types'] },
    exclude: { path: '^src/.*/(ui|console)/.*\\.js$' },
  },
};
