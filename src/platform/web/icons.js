// @ts-check
// The consoles' icons, inline SVG drawn with strokes in the text colour (base.css `svg.icon`): emoji render as empty
// boxes where no emoji font is installed, and an icon font would be one more download. Each icon is decorative; the
// button or link it sits in carries the accessible name.
import { svg } from './dom.js';

/** Path data on a 24×24 grid, one or more `d` strings per icon. */
const PATHS = /** @type {const} */ ({
  'thumbs-up': ['M7 10v11H3V10z', 'M7 10l4-8a3 3 0 0 1 3 3v4h5.5a2 2 0 0 1 2 2.3l-1.3 8A2 2 0 0 1 18.2 21H7'],
  'thumbs-down': ['M17 14V3h4v11z', 'M17 14l-4 8a3 3 0 0 1-3-3v-4H4.5a2 2 0 0 1-2-2.3l1.3-8A2 2 0 0 1 5.8 3H17'],
  trash: ['M3 6h18', 'M8 6V4h8v2', 'M6 6l1 15h10l1-15', 'M10 11v6', 'M14 11v6'],
  download: ['M12 3v12', 'M7 10l5 5 5-5', 'M4 21h16'],
  refresh: ['M20 11a8 8 0 1 0-2.3 5.7', 'M20 4v7h-7'],
  edit: ['M4 20h4L19 9l-4-4L4 16z', 'M14 6l4 4'],
  play: ['M7 4l13 8-13 8z'],
  save: ['M5 3h11l4 4v14H5z', 'M8 3v6h8V3', 'M8 21v-7h8v7'],
  share: ['M12 3v13', 'M7 8l5-5 5 5', 'M5 13v8h14v-8'],
  chart: ['M4 20V4', 'M4 20h16', 'M8 16v-5', 'M12 16V8', 'M16 16v-8'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  search: ['M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14z', 'M16 16l5 5'],
  file: ['M6 2h8l5 5v15H6z', 'M14 2v5h5'],
  plus: ['M12 5v14', 'M5 12h14'],
  user: ['M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M4 21a8 8 0 0 1 16 0'],
  history: ['M3 12a9 9 0 1 0 3-6.7', 'M3 4v5h5', 'M12 7v5l3 3'],
  star: ['M12 3l2.8 5.7 6.2.9-4.5 4.4 1 6.2L12 17.3 6.5 20.2l1-6.2L3 9.6l6.2-.9z'],
  link: ['M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1', 'M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1'],
});

/** @typedef {keyof typeof PATHS} IconName */

/**
 * An inline SVG icon, hidden from assistive technology (give its button an aria-label or text).
 * @param {IconName} name
 * @returns {SVGSVGElement}
 */
export function icon(name) {
  return svg(
    'svg',
    { class: 'icon', viewBox: '0 0 24 24', 'aria-hidden': 'true', focusable: 'false' },
    PATHS[name].map((d) => svg('path', { d })),
  );
}
