// The linter of the browser code in assets/ (eslint, pinned in package.json; tests/test_js_units.py runs it).
// A component's module is assembled by app_pages/_support/pack.py's component_js: the shared files of
// assets/common/ (view.js, keys.js, hover.js, pack.js) first, then the component's own file. So the shared
// files are linted as scripts whose top-level names are for others, and their top-level names are globals of
// the component files and of each other: read from the files themselves, so this list cannot drift from them.
import { readFileSync } from "node:fs";

import js from "@eslint/js";
import globals from "globals";

const SHARED = ["assets/common/view.js", "assets/common/keys.js", "assets/common/hover.js", "assets/common/pack.js"];
const TOP_LEVEL = /^(?:async\s+)?(?:function\s+(\w+)|const\s+(\w+))/gm;
const namesOf = (files) => Object.fromEntries(files.flatMap((file) => [...readFileSync(file, "utf8").matchAll(TOP_LEVEL)]
  .map((m) => [m[1] ?? m[2], "readonly"])));
const shared = namesOf(SHARED);

export default [
  { ignores: ["node_modules/**"] },
  js.configs.recommended,
  {
    files: ["assets/**/*.js"],
    ignores: SHARED,
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.browser, ...shared } },
    rules: { "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }], eqeqeq: ["error", "always"], "prefer-const": "error",
             "no-var": "error" },
  },
  ...SHARED.map((file) => ({
    files: [file],     // each shared file sees the others' names (view.js registers with keys.js, ...)
    languageOptions: { ecmaVersion: 2024, sourceType: "script",
                       globals: { ...globals.browser, ...namesOf(SHARED.filter((f) => f !== file)) } },
    rules: { "no-unused-vars": ["error", { vars: "local", args: "none" }], eqeqeq: ["error", "always"],
             "prefer-const": "error", "no-var": "error" },
  })),
  {
    // component files use PLAYER_CSS / EXPLORER_CSS, the stylesheet pack.py puts before them
    files: ["assets/player/player.js"], languageOptions: { globals: { PLAYER_CSS: "readonly" } },
  },
  {
    files: ["assets/explorer/explorer.js"], languageOptions: { globals: { EXPLORER_CSS: "readonly" } },
  },
  {
    files: ["assets/practice/editor.js"], languageOptions: { globals: { EDITOR_CSS: "readonly" } },
  },
  {
    // the unit tests: node, standing in for a browser (they set globalThis.window, document ...)
    files: ["assets/**/*.mjs", "eslint.config.mjs"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node, ...globals.browser } },
  },
];
