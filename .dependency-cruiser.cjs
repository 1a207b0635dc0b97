// The architecture, checked (scripts/check-imports.sh, in CI): src/platform is shared and imports no service; a
// service never imports another; no import cycles, except the SQL grammar's own recursion in explore's lineage
// (a query holds expressions that hold queries).
const SERVICES = ['retrieval', 'explore', 'tracker', 'dashboards-runtime'];

module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-service',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: `^src/(${SERVICES.join('|')})/` },
    },
    ...SERVICES.map((service) => ({
      name: `${service}-imports-no-other-service`,
      severity: 'error',
      from: { path: `^src/${service}/` },
      to: { path: `^src/(${SERVICES.filter((s) => s !== service).join('|')})/` },
    })),
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
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/.*/(ui|console)/.*\\.js$' },
  },
};
