// weaver's map page: the host graph of a store, drawn with sigma.js (or a
// 2D canvas without WebGL), where the store's layout puts the hosts, or
// laid out by ForceAtlas2 in a web worker when it gave no positions.
//
// The page gets its data in one of two ways, said by #weaver-config:
//   - live ({"live": true, "data": "map/data"}): it polls the data URL with
//     ?since=CURSOR and merges what changed since the previous answer, so the
//     graph grows while a crawl runs without being reloaded or laid out again;
//   - embedded ({"live": false}): #weaver-graph holds weaver's node-link JSON
//     export (weaver export --html), and nothing is fetched.
// Either way #stats carries data-nodes and data-edges: what is drawn.
//
// The modules: state.js (what the page holds), data.js (merging answers,
// placing hosts), style.js (sizes, colours, legend, changed hosts),
// labels.js (labels without overlap), sigma-map.js and canvas-map.js (the
// two renderers), layout.js (ForceAtlas2), panels.js (details, notices).

import { $, el, fmt, config } from './dom.js';
import { state, shown, ARROWS_MAX_EDGES, POINT_NODES_ABOVE, HIDE_EDGES_ON_MOVE_ABOVE, LOD_NODES } from './state.js';
import { DIMMED, EDGE_RGB, EDGE_FOCUS, PALETTE, hex2, sigmaColour } from './colours.js';
import { ingest, buildDomains } from './data.js';
import { restyle, edgeAlpha, markChanged } from './style.js';
import { MapSigma, LodPointProgram } from './sigma-map.js';
import { Canvas2DMap } from './canvas-map.js';
import { layoutBudget, startLayout, stopLayout, killLayout, layoutRunning, showLayoutButton } from './layout.js';
import { showInfo, showNoWebGL, webGLMissing } from './panels.js';

// ---- drawing ---------------------------------------------------------------

let renderer = null;

// nodeReducer draws big graphs with point sprites, sorted by size when a
// level of detail is in force (zIndex in [0, 1), so that the biggest nodes
// come last), and dims what the focused node does not link with.
function nodeReducer(key, data) {
  const z = state.lod ? Math.min(0.99, data.size / 64) : 0;
  if (state.nodeType) data = { ...data, type: state.nodeType, zIndex: z };
  const f = state.hovered ?? state.selected;
  if (f === null || !state.focusNeighbours) return data;
  if (key === f) return { ...data, highlighted: true, zIndex: 2 + z };
  if (state.focusNeighbours.has(key)) return { ...data, zIndex: 1 + z };
  return { ...data, color: DIMMED, label: '', zIndex: z };
}

function edgeReducer(key, data) {
  if (data.weight < state.minWeight) return { ...data, hidden: true };
  const G = shown();
  const f = state.hovered ?? state.selected;
  const type = state.drawnEdges <= ARROWS_MAX_EDGES ? 'arrow' : 'line';
  if (f !== null && G.hasNode(f)) {
    if (G.source(key) === f || G.target(key) === f) return { ...data, type, color: EDGE_FOCUS, zIndex: 1 };
    return { ...data, type, hidden: true };
  }
  return { ...data, type, color: state.edgeColour };
}

function rendererSettings() {
  return {
    nodeReducer,
    edgeReducer,
    zIndex: true,
    renderEdgeLabels: false,
    labelRenderedSizeThreshold: 9,
    labelDensity: 0.6,
    defaultEdgeColor: sigmaColour(EDGE_RGB, edgeAlpha()),
    minCameraRatio: 0.005,
    maxCameraRatio: 20,
    hideEdgesOnMove: false,
  };
}

// ensureRenderer draws the map with sigma on WebGL, or, without WebGL (or
// when sigma fails on it: a lost or blocked context), on a 2D canvas.
function ensureRenderer() {
  if (renderer) return;
  if (!state.noWebGL) {
    try {
      renderer = new MapSigma(shown(), $('graph'), { ...rendererSettings(), nodeProgramClasses: { point: LodPointProgram } });
    } catch (err) {
      console.error(err);
      $('graph').replaceChildren();
      state.noWebGL = 'WebGL failed: ' + err.message;
    }
  }
  if (!renderer) renderer = new Canvas2DMap(shown(), $('graph'), rendererSettings());
  renderer.on('enterNode', ({ node }) => { state.hovered = node; refocus(); });
  renderer.on('leaveNode', () => { state.hovered = null; refocus(); });
  renderer.on('clickNode', ({ node }) => select(node));
  renderer.on('clickStage', () => select(null));
  // The page reports the frames it draws, by kind (a level-of-detail frame
  // while the camera moves, the whole graph otherwise), so that a test or
  // a user can tell a map that redraws from a frozen one.
  renderer.on('afterRender', () => {
    const d = $('stats').dataset;
    const kind = renderer.lodMoving ? 'lodFrames' : 'fullFrames';
    d[kind] = String(+(d[kind] || 0) + 1);
    d.moving = String(!!renderer.lodMoving);
    d.labels = String((renderer.labelBoxes || []).length);
    d.rings = String(renderer.ringsDrawn || 0);
    if (!firstFrame && state.loaded && shown().order > 0) noteFirstFrame();
  });
}

// firstFrame is the first frame that drew hosts: when (ms since the page
// started loading, also #stats' data-first-frame) and where it put them
// ({key: [x, y]}, graph coordinates), so that a test or a user can tell
// how soon the map showed something, and what.
let firstFrame = null;

function noteFirstFrame() {
  const at = {};
  shown().forEachNode((k, a) => { at[k] = [a.x, a.y]; });
  firstFrame = { ms: Math.round(performance.now()), hosts: shown().order, at };
  $('stats').dataset.firstFrame = String(firstFrame.ms);
}

function refocus() {
  const G = shown();
  const f = state.hovered ?? state.selected;
  state.focusNeighbours = f !== null && G.hasNode(f) ? new Set(G.neighbors(f)) : null;
  $('graph').style.cursor = state.hovered !== null ? 'pointer' : '';
  showInfo(f, focus);
  if (renderer) renderer.refresh({ skipIndexation: true });
}

function select(key) {
  state.selected = key;
  refocus();
}

// focus selects a node and moves the camera to it.
function focus(key) {
  select(key);
  if (!renderer || key === null) return;
  const d = renderer.getNodeDisplayData(key);
  if (!d) return;
  const cam = renderer.getCamera();
  cam.animate({ x: d.x, y: d.y, ratio: Math.min(cam.ratio, 0.3) }, { duration: 400 });
}

function updateStats() {
  const G = shown();
  let drawn = 0;
  G.forEachEdge((e, a) => { if (a.weight >= state.minWeight) drawn++; });
  state.drawnEdges = drawn;
  const edgeColourWas = state.edgeColour;
  state.edgeColour = sigmaColour(EDGE_RGB, edgeAlpha());
  const s = $('stats');
  s.dataset.nodes = String(G.order);
  s.dataset.edges = String(drawn);
  s.dataset.view = state.view;
  s.dataset.state = !state.loaded ? 'loading' : state.live ? 'live' : 'done';
  s.dataset.updates = String(state.updates);
  s.dataset.fullLoads = String(state.fullLoads);
  s.dataset.error = state.error || '';
  s.dataset.layout = state.view === 'hosts' && state.stored ? 'stored' : 'force';
  s.dataset.changed = String(state.changed.size);
  const what = state.view === 'domains' ? 'domains' : 'hosts';
  let text = fmt(G.order) + ' ' + what + ' · ' + fmt(drawn) + ' links';
  if (state.minWeight > 1) text += ' (weight ≥ ' + state.minWeight + ')';
  if (state.live) text += ' · live';
  else if (config.live) text += ' · crawl ended';
  if (state.error) text += ' · ' + state.error;
  s.textContent = text;
  s.title = text;
  s.dataset.renderer = !renderer ? '' : state.noWebGL ? 'canvas' : 'webgl';
  if (state.noWebGL) showNoWebGL();
  $('message').textContent = state.loaded && G.order === 0 ? 'No hosts yet.' : state.loaded ? '' : 'Loading…';
  if (renderer) {
    const hide = drawn > HIDE_EDGES_ON_MOVE_ABOVE;
    if (renderer.getSetting('hideEdgesOnMove') !== hide) renderer.setSetting('hideEdgesOnMove', hide);
    const type = G.order > POINT_NODES_ABOVE ? 'point' : null;
    const lod = hide && type === 'point' && G.order > LOD_NODES;
    renderer.lod = lod;
    if (state.nodeType !== type || state.lod !== lod || state.edgeColour !== edgeColourWas) {
      state.nodeType = type;
      state.lod = lod;
      renderer.refresh();
    }
  }
}

// ---- updates ---------------------------------------------------------------

function apply(data, full) {
  const t = state.timings;
  let t0 = performance.now();
  const lap = (name) => {
    const now = performance.now();
    t[name] = Math.round(now - t0);
    t0 = now;
  };
  const res = ingest(data, full);
  lap('ingest');
  state.updates++;
  if (full) state.fullLoads++;
  state.loaded = true;
  if (state.view === 'domains') buildDomains();
  restyle();
  lap('style');
  ensureRenderer();
  updateStats();
  lap('renderer');
  // The store's layout is drawn as it is: the page runs ForceAtlas2 only
  // on a graph without one (or when asked), new hosts then placed near
  // their neighbours.
  if (state.stored && state.view === 'hosts') {
    if (full && layoutRunning()) stopLayout();
  } else if (res.fresh > 0) {
    startLayout(state.fullLoads === 1 && full ? layoutBudget(shown()) : 3000);
  }
  showLayoutButton();
  const f = state.hovered ?? state.selected;
  if (f !== null) {
    if (!shown().hasNode(f)) {
      state.hovered = null;
      state.selected = null;
    }
    refocus();
  }
}

let failures = 0;

// RANKS_EVERY is how often the live page asks for the hosts' ranks (the
// server computes them again only when the graph changed, and at most
// every 5 s or twenty times what they cost).
const RANKS_EVERY = 10000;
let ranksAskedAt = -Infinity;

async function poll() {
  const sep = config.data.includes('?') ? '&' : '?';
  let url = config.data + sep + 'since=' + encodeURIComponent(state.cursor);
  if (performance.now() - ranksAskedAt > RANKS_EVERY) {
    url += '&ranks=1';
    ranksAskedAt = performance.now();
  }
  let data;
  try {
    const r = await fetch(url, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } });
    if (!r.ok) throw new Error('HTTP ' + r.status);
    data = await r.json();
  } catch (err) {
    // The crawl ended and took its server along, or the network failed.
    failures++;
    state.error = 'disconnected (' + err.message + ')';
    if (failures >= 10) state.live = false;
    updateStats();
    if (state.live) setTimeout(poll, Math.min(10000, 1000 * failures));
    return;
  }
  failures = 0;
  state.error = '';
  if (data.ranks_error) console.warn('weaver: ranks: ' + data.ranks_error);
  let next = data.next_ms || 1500;
  try {
    apply(data, !!data.full);
  } catch (err) {
    // A bug of the page: show it, let the console have it, keep going.
    state.error = 'error: ' + err.message;
    updateStats();
    setTimeout(poll, 5000);
    throw err;
  }
  state.cursor = data.cursor || '0';
  const t = data.total;
  if (t && (state.hosts.order !== t.nodes || state.hosts.size !== t.edges)) {
    // Something was missed (a clock stepped back, the store was replaced):
    // ask for it all, merged into what is drawn.
    state.cursor = '0';
    next = 0;
  } else if (data.live === false) {
    state.live = false;
    updateStats();
    return;
  }
  setTimeout(poll, next);
}

// ---- controls --------------------------------------------------------------

function setView(view) {
  if (view === state.view) return;
  killLayout();
  state.view = view;
  state.hovered = null;
  state.selected = null;
  state.communities = null;
  if (view === 'domains') buildDomains();
  restyle();
  updateStats();
  if (renderer) renderer.setGraph(shown());
  refocus();
  if (view === 'domains' && !state.domainsLaidOut && !state.stored) {
    state.domainsLaidOut = true;
    startLayout(layoutBudget(shown()));
  }
}

function searchMatches(q) {
  q = q.trim().toLowerCase();
  if (!q) return [];
  const G = shown();
  const hits = [];
  G.forEachNode((k, a) => {
    const l = a.label.toLowerCase();
    const i = l.indexOf(q);
    if (i < 0) return;
    const rank = l === q ? 0 : i === 0 ? 1 : 2;
    hits.push({ k, rank, size: a.size, label: a.label });
  });
  hits.sort((x, y) => x.rank - y.rank || y.size - x.size || (x.label < y.label ? -1 : 1));
  return hits.slice(0, 12);
}

function setupControls() {
  const input = $('search');
  const results = $('search-results');
  let hits = [];
  let active = 0;
  const render = () => {
    results.replaceChildren();
    hits.forEach((h, i) => {
      const li = el('li', { 'data-node': h.k, class: i === active ? 'active' : '' }, h.label);
      li.addEventListener('mousedown', (ev) => { ev.preventDefault(); pick(h.k); });
      results.append(li);
    });
  };
  const pick = (k) => {
    hits = [];
    render();
    input.value = shown().getNodeAttribute(k, 'label');
    focus(k);
  };
  input.addEventListener('input', () => { hits = searchMatches(input.value); active = 0; render(); });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown') { active = Math.min(active + 1, hits.length - 1); render(); ev.preventDefault(); }
    else if (ev.key === 'ArrowUp') { active = Math.max(active - 1, 0); render(); ev.preventDefault(); }
    else if (ev.key === 'Enter') {
      if (!hits.length) hits = searchMatches(input.value);
      if (hits.length) pick(hits[Math.min(active, hits.length - 1)].k);
    } else if (ev.key === 'Escape') { hits = []; render(); }
  });
  input.addEventListener('blur', () => { hits = []; render(); });

  $('min-weight').addEventListener('input', (ev) => {
    const v = Math.max(1, parseInt(ev.target.value, 10) || 1);
    state.minWeight = v;
    updateStats();
    if (renderer) renderer.refresh({ skipIndexation: true });
  });
  $('view').addEventListener('change', (ev) => setView(ev.target.value));
  $('colour').addEventListener('change', (ev) => {
    state.colour = ev.target.value;
    state.colourChosen = true;
    restyle();
  });
  $('layout').addEventListener('click', () => {
    if (layoutRunning()) stopLayout();
    else startLayout(30000);
  });
  $('changed-within').addEventListener('change', (ev) => {
    state.changedWithin = Number(ev.target.value) || Infinity;
    markChanged();
    $('changed-count').textContent = fmt(state.changed.size) + ' ' + (state.view === 'domains' ? 'domains' : 'hosts');
    updateStats();
    if (renderer) renderer.refresh({ skipIndexation: true });
  });
  setupLegend();
}

// setupLegend docks the legend left of the map, so that it covers no
// host: the map starts at its right edge (--legend), open or folded to a
// strip. In a small window it starts folded, and opened it lies over the
// map, which keeps its width.
function setupLegend() {
  const box = $('legend');
  const toggle = $('legend-toggle');
  const small = () => window.innerWidth < 700 || window.innerHeight < 500;
  const set = (open) => {
    box.dataset.open = String(open);
    toggle.setAttribute('aria-expanded', String(open));
    toggle.title = open ? 'Fold the legend' : 'Show the legend';
    toggle.textContent = open ? '‹' : '›';
    $('legend-body').hidden = !open;
    dock();
  };
  const dock = () => {
    const docked = box.dataset.open === 'true' && !small();
    box.dataset.over = String(!docked && box.dataset.open === 'true');
    const border = box.offsetWidth - box.clientWidth;
    const w = docked ? box.offsetWidth : toggle.offsetWidth + border;
    document.documentElement.style.setProperty('--legend', w + 'px');
    if (renderer && renderer.resize) {
      renderer.resize();
      renderer.refresh();
    }
  };
  toggle.addEventListener('click', () => set(box.dataset.open !== 'true'));
  window.addEventListener('resize', dock);
  set(!small());
}

// ---- start -----------------------------------------------------------------

function main() {
  state.noWebGL = webGLMissing();
  // The map starts below the toolbar, whose controls wrap in a narrow
  // window.
  const bar = $('bar');
  const barHeight = () => document.documentElement.style.setProperty('--bar', bar.offsetHeight + 'px');
  barHeight();
  if (window.ResizeObserver) new ResizeObserver(barHeight).observe(bar);
  setupControls();
  showLayoutButton();
  updateStats();
  if (config.live && config.data) {
    poll();
    return;
  }
  const t0 = performance.now();
  const text = $('weaver-graph').textContent.trim();
  const data = text ? JSON.parse(text) : { nodes: [], edges: [] };
  state.timings.parse = Math.round(performance.now() - t0);
  apply(data, true);
}

// For scripts and tests: the graph shown, the renderer, the layout.
window.weaverMap = {
  get graph() { return shown(); },
  get hosts() { return state.hosts; },
  get renderer() { return renderer; },
  state,
  startLayout: (ms) => startLayout(ms || 30000),
  stopLayout,
  layoutRunning,
  // The labels drawn in the last frame, each {key, x0, y0, x1, y1}: its
  // box in the page's pixels (laid out so that no two intersect).
  labelBoxes: () => {
    const g = $('graph').getBoundingClientRect();
    return ((renderer && renderer.labelBoxes) || []).map(({ key, box }) =>
      ({ key, x0: g.left + box[0], y0: g.top + box[1], x1: g.left + box[2], y1: g.top + box[3] }));
  },
  // The hosts (domains) ringed as changed recently.
  changed: () => [...state.changed],
  // The first frame that drew hosts: {ms, hosts, at: {key: [x, y]}}.
  firstFrame: () => firstFrame,
  focus,
  select,
  setView,
  // The links' colour as a CSS colour (sigma is given it premultiplied).
  edgeColour: () => EDGE_RGB + hex2(edgeAlpha()),
  palette: PALETTE,
};

main();
