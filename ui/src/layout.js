// The layout: ForceAtlas2 in a web worker, run on a graph the store gave
// no positions, or when asked; it stops by itself once the picture
// settles. The toolbar's button says what clicking it does: "Run layout"
// while none runs, "Stop layout" while one does.

import FA2Layout from 'graphology-layout-forceatlas2/worker';
import forceAtlas2 from 'graphology-layout-forceatlas2';
import { $ } from './dom.js';
import { shown } from './state.js';

let fa2 = null;
let layoutTimer = null;
let layoutUntil = 0;
let lastSample = null;
let calm = 0;
let startedAt = 0;
let slowDown = 1; // inferSettings' for the graph: where a run starts

// CHECK_MS is how often the layout is looked at; it has settled when
// SETTLED checks in a row saw the picture move less than STILL: a
// sample's mean move in a check, over the side of the box holding the
// graph (what the map fits into its view, so that a drift of the whole
// graph, which the view follows, does not count). 0.003 of a 700-pixel
// map is 2 pixels in half a second.
const CHECK_MS = 500;
const STILL = 0.003;
const SETTLED = 2;
// graphology's ForceAtlas2 has no adaptive speed (Gephi's global swing
// and traction): on a graph without much structure its nodes keep
// swinging, 1 to 3 % of the picture a second 14 s after the start (300
// hosts of the generated web), and it ran until its time was up. From
// COOL_AFTER ms on, every check slows it down by COOLING (slowDown, which
// the worker reads at every round of iterations): it then settles within
// seconds.
const COOL_AFTER = 2000;
const COOLING = 1.3;

export function layoutBudget(G) {
  if (G.order <= 2000) return 15000;
  if (G.order <= 10000) return 10000;
  return 6000;
}

export function startLayout(ms) {
  const G = shown();
  if (G.order < 2) return;
  if (!fa2 || fa2.graph !== G) {
    if (fa2) fa2.kill();
    const settings = forceAtlas2.inferSettings(G);
    fa2 = new FA2Layout(G, {
      settings: { ...settings, edgeWeightInfluence: 1 },
      getEdgeWeight: (e, a) => 1 + Math.log2(a.weight),
    });
    slowDown = fa2.settings.slowDown;
  }
  layoutUntil = Math.max(layoutUntil, performance.now() + ms);
  if (!fa2.isRunning()) fa2.start();
  fa2.settings.slowDown = slowDown;
  startedAt = performance.now();
  lastSample = null;
  calm = 0;
  if (!layoutTimer) layoutTimer = setInterval(checkLayout, CHECK_MS);
  showLayoutButton();
}

export function stopLayout() {
  if (fa2) fa2.stop();
  if (layoutTimer) clearInterval(layoutTimer);
  layoutTimer = null;
  layoutUntil = 0;
  showLayoutButton();
}

// showLayoutButton sets the button's text and tooltip to what a click
// does now.
export function showLayoutButton() {
  const b = $('layout');
  const running = layoutRunning();
  b.textContent = running ? 'Stop layout' : 'Run layout';
  b.title = running ? 'Stop ForceAtlas2: the hosts stay where they are'
    : 'Lay the hosts out with ForceAtlas2 (it stops by itself once they settle)';
  b.dataset.running = String(running);
}

// checkLayout stops the layout when its time is up or when the picture
// has settled (see STILL), and cools it down (see COOLING).
function checkLayout() {
  if (!fa2 || !fa2.isRunning()) return stopLayout();
  const now = performance.now();
  if (now > layoutUntil) return stopLayout();
  if (now - startedAt > COOL_AFTER) fa2.settings.slowDown *= COOLING;
  const G = shown();
  const keys = G.nodes();
  const step = Math.max(1, Math.floor(keys.length / 1000));
  const sample = new Map();
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  G.forEachNode((k, a) => {
    if (a.x < minX) minX = a.x;
    if (a.x > maxX) maxX = a.x;
    if (a.y < minY) minY = a.y;
    if (a.y > maxY) maxY = a.y;
  });
  const side = Math.max(1e-9, maxX - minX, maxY - minY);
  for (let i = 0; i < keys.length; i += step) {
    const a = G.getNodeAttributes(keys[i]);
    sample.set(keys[i], [(a.x - minX) / side, (a.y - minY) / side]);
  }
  if (lastSample) {
    let moved = 0, n = 0;
    for (const [k, [x, y]] of sample) {
      const p = lastSample.get(k);
      if (!p) continue;
      moved += Math.hypot(x - p[0], y - p[1]);
      n++;
    }
    calm = n > 0 && moved / n < STILL ? calm + 1 : 0;
    if (calm >= SETTLED) return stopLayout();
  }
  lastSample = sample;
}

// layoutRunning says whether ForceAtlas2 moves the nodes.
export const layoutRunning = () => !!(fa2 && fa2.isRunning());

// killLayout ends the layout's worker (the shown graph changes).
export function killLayout() {
  if (fa2) { fa2.kill(); fa2 = null; }
  stopLayout();
}
