/**
 * Layer rules from STYLE.md, checked by `npm run lint` (depcruise src --config .dependency-cruiser.js).
 * Imports point inward: modules -> domain; infrastructure -> domain; sagas -> commands and domain
 * events (never modules -> sagas); domain -> nothing.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'src/domain is plain TypeScript: it imports only src/domain and node built-ins ' +
        '(node:crypto etc.), never an npm package (Nest, TypeORM, Kafka, class-validator...) ' +
        'nor another layer. Put the port in the domain and the adapter in infrastructure. ' +
        'Its specs may use test tooling (a schema validator, fixtures): they are not the domain.',
      from: { path: '^src/domain/', pathNot: '\\.spec\\.ts$' },
      to: { pathNot: '^src/domain/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'infrastructure-not-to-modules-or-sagas',
      severity: 'error',
      comment:
        'Infrastructure implements domain ports; it must not reach up into feature modules or ' +
        'sagas. Move the shared piece into src/domain (a port, type or event).',
      from: { path: '^src/infrastructure/' },
      to: { path: '^src/(modules|sagas)/' },
    },
    {
      name: 'modules-not-to-sagas',
      severity: 'error',
      comment:
        'Sagas react to domain events and call the modules’ commands; the modules never call sagas. ' +
        'Publish a domain event (DomainEventBus) and let the saga subscribe to it.',
      from: { path: '^src/modules/' },
      to: { path: '^src/sagas/' },
    },
    {
      name: 'sagas-not-to-infrastructure',
      severity: 'error',
      comment:
        'Sagas only route events to commands (command classes and domain events); they never ' +
        'touch the database, Kafka or providers directly.',
      from: { path: '^src/sagas/' },
      to: { path: '^src/infrastructure/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Circular runtime dependency. Cycles in which some edge is `import type` are erased at ' +
        'compile time and allowed; break the others with a port in the domain or by splitting ' +
        'the module.',
      from: {},
      // viaOnly: every edge of the cycle must be a runtime import for the rule to fire.
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // Keep `import type` edges (marked 'type-only') so the domain rule sees them too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.json'],
      mainFields: ['main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
