// The CodeMirror 6 the console's SQL editor uses, as one module: esbuild bundles this file from the installed packages
// (editor-bundle.ts) and pageRoutes serves it as /ui/vendor/codemirror.js. The console's editor.js imports that path,
// and tsc reads this file for its types (tsconfig.web.json's rootDirs). Add here what editor.js needs, nothing more.
export { EditorView, keymap, placeholder, lineNumbers, drawSelection, highlightActiveLine } from '@codemirror/view';
export { EditorState, Compartment, Prec } from '@codemirror/state';
export { sql, StandardSQL } from '@codemirror/lang-sql';
export { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
export { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
export { syntaxHighlighting, bracketMatching } from '@codemirror/language';
export { classHighlighter } from '@lezer/highlight';
