// The types of /ui/vendor/marked.js, which pageRoutes serves from the installed package (index.ts); tsc reads this file
// for them (tsconfig.web.json's rootDirs). Never served.
export { Marked } from 'marked';
