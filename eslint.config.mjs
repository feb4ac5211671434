// Lint: correctness rules only (ESLint's and typescript-eslint's recommended sets, React's hook
// rules for the console); Prettier owns the layout, so eslint-config-prettier comes last and turns
// off every rule that would argue with it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'bench/results/**', 'bench/tmp/**', 'server/native/addon/build/**', 'test/e2e/screenshots/**', 'data/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_`-prefixed arguments and variables are deliberately unused (a handler's fixed signature).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // The server logs through pino and the bench prints through one helper: a stray console call is a mistake.
    files: ['server/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    // Tests and mock upstreams poke at wire JSON of many shapes; declaring each would only restate the fixtures.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // CommonJS files (jest's config, the addon's loader).
    files: ['**/*.cjs', 'test/jest.config.js', 'server/native/addon/index.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['admin/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    // The two classic hook rules. The plugin's newer recommended set (set-state-in-effect, purity, …)
    // checks code for the React Compiler, which the console does not use.
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
  },
  prettier,
);
