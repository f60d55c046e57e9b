// The layout: ForceAtlas2 in a web worker, run on a graph the store gave
// no positions, or when asked; it stops by itself once it settles.

import FA2Layout from 'graphology-layout-forceatlas2/worker';
import forceAtlas2 from 'graphology-layout-forceatlas2';
import { $ } from './dom.js';
import { shown } from './state.js';

let fa2 = null;
let layoutTimer = null;
let layoutUntil = 0;
let lastSample = null;

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
  }
  layoutUntil = Math.max(layoutUntil, performance.now() + ms);
  if (!fa2.isRunning()) fa2.start();
  lastSample = null;
  if (!layoutTimer) layoutTimer = setInterval(checkLayout, 500);
  $('layout').textContent = 'stop layout';
}

export function stopLayout() {
  if (fa2) fa2.stop();
  if (layoutTimer) clearInterval(layoutTimer);
  layoutTimer = null;
  layoutUntil = 0;
  $('layout').textContent = 'run layout';
}

// checkLayout stops the layout when its time is up or when the nodes have
// stopped moving: a sample of them moved less than 0.1% of the drawing.
function checkLayout() {
  if (!fa2 || !fa2.isRunning()) return stopLayout();
  if (performance.now() > layoutUntil) return stopLayout();
  const G = shown();
  const keys = G.nodes();
  const step = Math.max(1, Math.floor(keys.length / 1000));
  const sample = new Map();
  let minX = Infinity, maxX = -Infinity;
  for (let i = 0; i < keys.length; i += step) {
    const a = G.getNodeAttributes(keys[i]);
    sample.set(keys[i], [a.x, a.y]);
    if (a.x < minX) minX = a.x;
    if (a.x > maxX) maxX = a.x;
  }
  if (lastSample) {
    let moved = 0, n = 0;
    for (const [k, [x, y]] of sample) {
      const p = lastSample.get(k);
      if (!p) continue;
      moved += Math.hypot(x - p[0], y - p[1]);
      n++;
    }
    const extent = Math.max(1e-9, maxX - minX);
    if (n > 0 && moved / n / extent < 0.001) return stopLayout();
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
