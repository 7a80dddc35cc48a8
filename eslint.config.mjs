// Flat config for ESLint 9. Syntax-only typescript-eslint rules (no type information) keep
// `npm run lint` fast; the compiler (`npm run typecheck`) covers the type-level checks.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Node globals for the plain CommonJS scripts (test/run-tests.js, scripts/**/*.js).
const nodeGlobals = Object.fromEntries(
  [
    'require', 'module', 'exports', '__dirname', '__filename', 'process', 'console', 'Buffer',
    'URL', 'URLSearchParams', 'fetch', 'AbortController', 'AbortSignal', 'TextEncoder', 'TextDecoder',
    'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate',
    'queueMicrotask', 'structuredClone', 'globalThis',
  ].map((name) => [name, 'readonly']),
);

// Browser globals for the ops dashboard's script (served as is, no build step).
const browserGlobals = Object.fromEntries(
  [
    'window', 'document', 'location', 'navigator', 'sessionStorage', 'fetch', 'crypto', 'CSS', 'Node',
    'URLSearchParams', 'TextEncoder', 'btoa', 'console', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  {
    ignores: [
      'dist/**',
      '**/node_modules/**',
      'coverage/**',
      '.data/**',
      'test-artifacts/**',
      'bench/results/**',
      // Tool configs at the root (jest.config.js, .dependency-cruiser.js): CommonJS, not app code.
      '*.js',
      '*.cjs',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'warn',
      // A focused test committed by mistake silently skips the rest of the suite.
      'no-restricted-properties': [
        'error',
        ...['describe', 'it', 'test'].map((object) => ({
          object,
          property: 'only',
          message: `${object}.only must not be committed; remove it before pushing.`,
        })),
      ],
      'no-restricted-globals': [
        'error',
        { name: 'fdescribe', message: 'fdescribe must not be committed; use describe.' },
        { name: 'fit', message: 'fit must not be committed; use it.' },
      ],
    },
  },
  {
    // The ops dashboard's browser script: a classic script (an IIFE), ES2020, browser globals only.
    files: ['src/modules/ops-dashboard/assets/**/*.js'],
    languageOptions: { ecmaVersion: 2020, sourceType: 'script', globals: browserGlobals },
  },
  {
    // Plain CommonJS node scripts.
    files: ['test/**/*.js', 'scripts/**/*.js', 'bench/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: nodeGlobals },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
);
