// The types of /ui/vendor/purify.js, which pageRoutes serves from the installed package (index.ts); tsc reads this file
// for them (tsconfig.web.json's rootDirs). Never served.
export { default } from 'dompurify';
