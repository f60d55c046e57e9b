// The page's colours: a palette for the biggest communities, stable
// colours per name, and sigma's premultiplied form.

import { hash } from './dom.js';

export function hex2(v) {
  return Math.round(Math.max(0, Math.min(255, v * 255))).toString(16).padStart(2, '0');
}

function hsl(h, s, l) {
  const a = s * Math.min(l, 1 - l);
  const f = (n) => {
    const k = (n + h / 30) % 12;
    return l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return '#' + hex2(f(0)) + hex2(f(8)) + hex2(f(4));
}

// A stable colour per name: the same domain has the same colour on every
// page and every reload.
export function nameColour(name) {
  const h = hash(name);
  return hsl((h % 360), 0.55 + ((h >>> 9) % 25) / 100, 0.42 + ((h >>> 17) % 18) / 100);
}

// PALETTE is the colours told apart at a glance: the biggest communities
// get them, in this order. Tableau 10 without its grey (which the page
// uses for hosts of no community), with navy, maroon and purple: every
// two of the twelve differ by at least 18 in CIEDE2000 (Tableau 10 with
// two blues and a green added differed by 7.9), and each stands out
// from the page's background and greys (ui/palette_test.go checks it).
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#000075', '#800000', '#911eb4'];

// NO_COMMUNITY colours a host that has none yet (found since the
// communities were).
export const NO_COMMUNITY = '#a0a7b4';

// A muted colour for a community beyond the palette's: distinct from its
// neighbours, but not competing with the big communities.
export function mutedColour(name) {
  const h = hash(name);
  return hsl(h % 360, 0.22 + ((h >>> 9) % 10) / 100, 0.62 + ((h >>> 17) % 10) / 100);
}

export const DIMMED = '#e4e6eb';

// CHANGED_RING is the ring around a host changed recently (issue 27),
// drawn outside its disc with a white gap, whatever the disc's colour.
export const CHANGED_RING = '#1d2330';

// Sigma blends its layers' pixels as premultiplied (gl.ONE,
// ONE_MINUS_SRC_ALPHA; the browser composites the canvas so), but passes
// colours as given: a translucent colour must come premultiplied, or it
// is drawn far lighter than asked (#8d97a880 came out near-white).
// sigmaColour returns #rrggbb at alpha a in that form.
export function sigmaColour(rgb, a) {
  const c = (i) => hex2(parseInt(rgb.slice(i, i + 2), 16) / 255 * a);
  return '#' + c(1) + c(3) + c(5) + hex2(a);
}

// straightColour turns a colour given to sigma (#rrggbbaa premultiplied,
// see sigmaColour) back into a CSS colour.
export function straightColour(c) {
  if (typeof c !== 'string' || c.length !== 9 || c[0] !== '#') return c;
  const a = parseInt(c.slice(7, 9), 16) / 255;
  if (a === 0) return 'rgba(0,0,0,0)';
  const ch = (i) => Math.min(255, Math.round(parseInt(c.slice(i, i + 2), 16) / a));
  return 'rgba(' + ch(1) + ',' + ch(3) + ',' + ch(5) + ',' + a.toFixed(3) + ')';
}

export const EDGE_RGB = '#3d4657'; // slate
export const EDGE_FOCUS = sigmaColour('#33405a', 0.82);
