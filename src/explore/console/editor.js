// @ts-check
// The console's SQL editor: CodeMirror 6 (served as one bundle, /ui/vendor/codemirror.js) with SQL highlighting and
// completion of the tables and columns the caller may read (GET /catalog), and Ctrl+Enter to run what it holds.
// It lives in a shadow root: there CodeMirror styles itself with adopted stylesheets, which the page's CSP allows; in
// the document it would write a <style> element, which `style-src 'self'` refuses. Its look is editor.css, linked
// inside the shadow root (the palette's custom properties inherit into it).
import { h } from './dom.js';
import {
  autocompletion,
  bracketMatching,
  classHighlighter,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
  Compartment,
  defaultKeymap,
  drawSelection,
  EditorState,
  EditorView,
  history,
  historyKeymap,
  keymap,
  lineNumbers,
  placeholder,
  Prec,
  StandardSQL,
  sql,
  syntaxHighlighting,
} from './vendor/codemirror.js';

/** @typedef {{ fqn: string, columns: { name: string }[] }} OpenTable */

/** Unqualified names complete from here, as the service reads them (pipeline.ts DEFAULTS). */
const DEFAULT_SCHEMA = 'tpch.tiny';

/** @param {readonly OpenTable[]} tables */
const language = (tables) =>
  sql({
    dialect: StandardSQL,
    // dotted keys are catalog.schema.table: completion walks them a level at a time
    schema: Object.fromEntries(tables.map((t) => [t.fqn, t.columns.map((c) => c.name)])),
    defaultSchema: DEFAULT_SCHEMA,
    upperCaseKeywords: true,
  });

/**
 * @param {HTMLElement} host
 * @param {{ onRun: (sql: string) => void }} opts
 */
export function createSqlEditor(host, { onRun }) {
  const root = host.attachShadow({ mode: 'open' });
  const parent = h('div', { id: 'editor' });
  root.append(h('link', { rel: 'stylesheet', href: 'ui/editor.css' }), parent);
  const schema = new Compartment();
  const editable = new Compartment();
  const run = () => {
    onRun(view.state.doc.toString());
    return true;
  };
  const view = new EditorView({
    root,
    parent,
    state: EditorState.create({
      doc: '',
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        syntaxHighlighting(classHighlighter),
        autocompletion(),
        schema.of(language([])),
        editable.of(EditorView.editable.of(true)),
        // before the default keymap, whose Mod-Enter inserts a blank line
        Prec.highest(keymap.of([{ key: 'Mod-Enter', run }])),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
        placeholder('SELECT … (Ctrl+Enter runs it)'),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ id: 'sql', 'aria-label': 'SQL statement', spellcheck: 'false' }),
      ],
    }),
  });
  return {
    /** The statement as the editor holds it. */
    get value() {
      return view.state.doc.toString();
    },
    /** @param {string} text */
    set value(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    /** The tables completion offers: only those the policy opens to the caller. @param {readonly OpenTable[]} tables */
    setTables(tables) {
      view.dispatch({ effects: schema.reconfigure(language(tables)) });
    },
    /** @param {boolean} on */
    setEnabled(on) {
      view.dispatch({ effects: editable.reconfigure(EditorView.editable.of(on)) });
    },
    focus() {
      view.focus();
    },
  };
}
