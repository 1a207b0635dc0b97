// Types of dom.js's arguments, written in TypeScript because a JSDoc typedef cannot refer to itself. Never served.

/** What h() and svg() append: nodes as they are, anything else as text; arrays are flattened, null, undefined and false skipped. */
export type Child = Node | string | number | boolean | null | undefined | readonly Child[];

export type AttrValue = string | number | boolean | null | undefined | ((event: Event) => unknown) | Record<string, string | number>;

/**
 * Attributes by name; `on<event>` takes a listener, `dataset` an object of data-* values, `true` is a bare
 * attribute, and null, undefined or false leave the attribute out.
 */
export type Attrs = Record<string, AttrValue>;
