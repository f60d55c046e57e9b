// weaver's map page: the host graph of a store, drawn with sigma.js and
// laid out by ForceAtlas2 in a web worker.
//
// The page gets its data in one of two ways, said by #weaver-config:
//   - live ({"live": true, "data": "map/data"}): it polls the data URL with
//     ?since=CURSOR and merges what changed since the previous answer, so the
//     graph grows while a crawl runs without being reloaded or laid out again;
//   - embedded ({"live": false}): #weaver-graph holds weaver's node-link JSON
//     export (weaver export --html), and nothing is fetched.
// Either way #stats carries data-nodes and data-edges: what is drawn.

import Graph from 'graphology';
import Sigma from 'sigma';
import { NodePointProgram } from 'sigma/rendering';
import FA2Layout from 'graphology-layout-forceatlas2/worker';
import forceAtlas2 from 'graphology-layout-forceatlas2';
import louvain from 'graphology-communities-louvain';

const $ = (id) => document.getElementById(id);

const config = JSON.parse($('weaver-config').textContent || '{}');

// Above these sizes the page trades detail for frame rate. Measured in
// headless chromium on software WebGL (SwiftShader), 20,000 hosts: sigma's
// circle program (a quad per node) drew ~1 frame/s, its point program (one
// vertex per node, the same anti-aliased disc) ~20; 196,000 edges take
// seconds a frame, so they are left out while the camera moves.
const ARROWS_MAX_EDGES = 5000; // arrow heads cost a second program
const POINT_NODES_ABOVE = 2000; // nodes drawn as point sprites
const HIDE_EDGES_ON_MOVE_ABOVE = 20000; // edges not drawn while panning and zooming
// While the camera moves over such a graph (its edges hidden), the page
// draws only the LOD_NODES biggest hosts (by PageRank, or in-weight until
// ranks are known), and skips sigma's picking pass (what the mouse points
// at is not asked mid-move): on software WebGL, 20,000 point sprites and
// the picking pass cost more than the rest of a frame. The whole graph is
// drawn again in the frame after the camera stops.
const LOD_NODES = 5000;

const state = {
  hosts: newGraph(), // every host: the data
  domains: null, // hosts collapsed by registrable domain, built when shown
  view: 'hosts',
  colour: 'domain', // or 'community': the default above PALETTE.length domains
  colourChosen: false, // the user chose the colouring: no default any more
  minWeight: 1,
  ranked: false, // most nodes carry PageRank: size by it (see restyle)
  cursor: '0',
  live: !!config.live,
  error: '',
  loaded: false,
  fullLoads: 0,
  updates: 0,
  hovered: null,
  selected: null,
  focusNeighbours: null,
  communities: null, // community colouring of the shown graph, when asked
  legend: [],
  drawnEdges: 0,
  nodeType: null, // 'point' for big graphs, else sigma's circles
  lod: false, // a big graph: fewer nodes while the camera moves (LOD_NODES)
  timings: {}, // ms of the last update's steps, for the benchmarks
  noWebGL: '', // why the browser cannot draw the map, when it cannot
  edgeColour: '', // the links' colour for sigma (premultiplied), set by updateStats
};

function newGraph() {
  return new Graph({ type: 'directed', multi: false, allowSelfLoops: true });
}

function shown() {
  return state.view === 'domains' ? state.domains : state.hosts;
}

// ---- colours ---------------------------------------------------------------

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

function hex2(v) {
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
function nameColour(name) {
  const h = hash(name);
  return hsl((h % 360), 0.55 + ((h >>> 9) % 25) / 100, 0.42 + ((h >>> 17) % 18) / 100);
}

// PALETTE is the colours told apart at a glance: the biggest communities
// get them. With more registrable domains than that, colours by domain
// say nothing, and the page colours by community unless told otherwise.
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#3b8bc2', '#d37295', '#8cd17d'];

// A muted colour for a community beyond the palette's: distinct from its
// neighbours, but not competing with the big communities.
function mutedColour(name) {
  const h = hash(name);
  return hsl(h % 360, 0.22 + ((h >>> 9) % 10) / 100, 0.62 + ((h >>> 17) % 10) / 100);
}

const DIMMED = '#e4e6eb';

// Sigma blends its layers' pixels as premultiplied (gl.ONE,
// ONE_MINUS_SRC_ALPHA; the browser composites the canvas so), but passes
// colours as given: a translucent colour must come premultiplied, or it
// is drawn far lighter than asked (#8d97a880 came out near-white).
// sigmaColour returns #rrggbb at alpha a in that form.
function sigmaColour(rgb, a) {
  const c = (i) => hex2(parseInt(rgb.slice(i, i + 2), 16) / 255 * a);
  return '#' + c(1) + c(3) + c(5) + hex2(a);
}

const EDGE_RGB = '#3d4657'; // slate
const EDGE_FOCUS = sigmaColour('#33405a', 0.82);

// edgeAlpha is the links' opacity: more transparent the more links are
// drawn, so that a dense graph's links shade its middle without drowning
// the hosts.
function edgeAlpha() {
  const n = Math.max(1, state.drawnEdges);
  return Math.max(0.12, Math.min(0.6, 0.55 * Math.sqrt(1000 / n)));
}

// ---- data ------------------------------------------------------------------

function edgeSize(w) {
  return Math.min(6, 1.2 + Math.log2(w) * 0.7);
}

// ingest merges an answer of the data URL, or a node-link export, into the
// host graph. A full answer replaces the graph's content, keeping the
// positions of the hosts it already had.
function ingest(data, full) {
  const H = state.hosts;
  const nodes = data.nodes || [];
  const edges = data.edges || [];
  const seenNodes = full ? new Set() : null;
  const seenEdges = full ? new Set() : null;
  const fresh = [];
  for (const n of nodes) {
    const key = String(n.id);
    if (seenNodes) seenNodes.add(key);
    const attrs = {
      label: n.host,
      host: n.host,
      domain: n.domain || n.host,
      title: n.title || '',
      status: n.status || '',
      http: n.http_status || 0,
      crawls: n.crawl_count || 0,
      depth: n.depth || 0,
      pages: n.pages_fetched || 0,
      canonical: n.canonical || '',
      robots: n.robots || '',
      mirrorOf: n.mirror_of ? String(n.mirror_of) : '',
      renderMS: n.render_ms || 0,
    };
    if (typeof n.pagerank === 'number') attrs.pagerank = n.pagerank;
    if (typeof n.harmonic === 'number') attrs.harmonic = n.harmonic;
    if (H.hasNode(key)) {
      H.mergeNodeAttributes(key, attrs);
    } else {
      attrs.inW = 0;
      attrs.outW = 0;
      attrs.x = 0;
      attrs.y = 0;
      attrs.size = 2;
      attrs.placed = false;
      H.addNode(key, attrs);
      fresh.push(key);
    }
  }
  const inDelta = new Map();
  const outDelta = new Map();
  const add = (m, k, d) => m.set(k, (m.get(k) || 0) + d);
  for (const e of edges) {
    let s, t, w;
    if (Array.isArray(e)) [s, t, w] = e;
    else ({ source: s, target: t, weight: w } = e);
    s = String(s);
    t = String(t);
    w = w || 1;
    if (!H.hasNode(s) || !H.hasNode(t)) continue;
    const key = s + '>' + t;
    if (seenEdges) seenEdges.add(key);
    let prev = 0;
    if (H.hasEdge(key)) {
      prev = H.getEdgeAttribute(key, 'weight');
      if (prev === w) continue;
      H.mergeEdgeAttributes(key, { weight: w, size: edgeSize(w) });
    } else {
      H.addDirectedEdgeWithKey(key, s, t, { weight: w, size: edgeSize(w) });
    }
    add(outDelta, s, w - prev);
    add(inDelta, t, w - prev);
  }
  if (Array.isArray(data.ranks)) {
    // The live page's ranks: [[id, pagerank, harmonic], ...] of every host
    // ranked (hosts found since have none yet).
    const by = new Map();
    for (const [id, pr, hc] of data.ranks) by.set(String(id), [pr, hc]);
    H.updateEachNodeAttributes((key, a) => {
      const r = by.get(key);
      if (r) [a.pagerank, a.harmonic] = r;
      return a;
    });
  }
  let dropped = 0;
  if (full) {
    for (const key of H.edges()) {
      if (seenEdges.has(key)) continue;
      const w = H.getEdgeAttribute(key, 'weight');
      add(outDelta, H.source(key), -w);
      add(inDelta, H.target(key), -w);
      H.dropEdge(key);
      dropped++;
    }
    for (const key of H.nodes()) {
      if (!seenNodes.has(key)) {
        H.dropNode(key);
        inDelta.delete(key);
        outDelta.delete(key);
        dropped++;
      }
    }
  }
  if (inDelta.size || outDelta.size) {
    H.updateEachNodeAttributes((key, a) => {
      const i = inDelta.get(key);
      const o = outDelta.get(key);
      if (i) a.inW += i;
      if (o) a.outW += o;
      return a;
    }); // no hints: sigma must index the nodes just added (see restyle)
  }
  place(H, fresh);
  return { fresh: fresh.length, changed: nodes.length + edges.length + dropped };
}

// place gives new nodes a position near the nodes they link with, so that
// a growing graph does not jump: breadth first from the placed ones, each
// node at the mean of its placed neighbours, a little off. A node with no
// placed neighbour starts a component at a random spot.
function place(G, keys) {
  const todo = new Set();
  for (const k of keys) if (G.hasNode(k) && !G.getNodeAttribute(k, 'placed')) todo.add(k);
  if (todo.size === 0) return;
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  G.forEachNode((k, a) => {
    if (!a.placed) return;
    if (a.x < minX) minX = a.x;
    if (a.x > maxX) maxX = a.x;
    if (a.y < minY) minY = a.y;
    if (a.y > maxY) maxY = a.y;
  });
  if (minX === Infinity) minX = minY = maxX = maxY = 0;
  const extent = Math.max(1, maxX - minX, maxY - minY);
  const cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
  const jitter = () => (Math.random() - 0.5) * extent * 0.04 + (Math.random() - 0.5);
  const queue = [];
  for (const k of todo) {
    if (G.someNeighbor(k, (n, a) => a.placed)) queue.push(k);
  }
  const setPos = (k, x, y) => {
    G.mergeNodeAttributes(k, { x, y, placed: true });
    todo.delete(k);
    G.forEachNeighbor(k, (n) => { if (todo.has(n)) queue.push(n); });
  };
  let head = 0;
  while (todo.size > 0) {
    if (head >= queue.length) {
      const k = todo.values().next().value;
      const r = Math.max(extent, Math.sqrt(G.order)) * 0.5 * Math.sqrt(Math.random());
      const a = Math.random() * 2 * Math.PI;
      setPos(k, cx + r * Math.cos(a), cy + r * Math.sin(a));
      continue;
    }
    const k = queue[head++];
    if (!todo.has(k)) continue;
    let sx = 0, sy = 0, c = 0;
    G.forEachNeighbor(k, (n, a) => {
      if (a.placed) { sx += a.x; sy += a.y; c++; }
    });
    if (c === 0) continue;
    setPos(k, sx / c + jitter(), sy / c + jitter());
  }
}

// buildDomains collapses the host graph into registrable domains, summing
// weights and leaving out links inside a domain. Domains already drawn keep
// their place; new ones start where their hosts are.
function buildDomains() {
  const H = state.hosts;
  const D = state.domains || newGraph();
  const agg = new Map();
  H.forEachNode((k, a) => {
    let d = agg.get(a.domain);
    if (!d) {
      d = { hosts: 0, inW: 0, outW: 0, pagerank: 0, sx: 0, sy: 0, top: null, topW: -1 };
      agg.set(a.domain, d);
    }
    d.hosts++;
    d.pagerank += a.pagerank || 0;
    d.sx += a.x;
    d.sy += a.y;
    const w = a.inW;
    if (w > d.topW) { d.top = a; d.topW = w; }
  });
  const weights = new Map();
  H.forEachEdge((e, a, s, t, sa, ta) => {
    if (sa.domain === ta.domain) return;
    const key = sa.domain + '>' + ta.domain;
    weights.set(key, (weights.get(key) || 0) + a.weight);
  });
  for (const k of D.nodes()) if (!agg.has(k)) D.dropNode(k);
  const fresh = [];
  for (const [name, d] of agg) {
    const attrs = {
      label: name, host: name, domain: name, hosts: d.hosts,
      title: d.hosts === 1 ? (d.top.title || '') : d.hosts + ' hosts',
      status: d.top.status, http: d.top.http, crawls: d.top.crawls, depth: d.top.depth,
      inW: 0, outW: 0,
    };
    if (state.ranked) attrs.pagerank = d.pagerank;
    if (D.hasNode(name)) {
      D.mergeNodeAttributes(name, attrs);
    } else {
      attrs.x = d.sx / d.hosts;
      attrs.y = d.sy / d.hosts;
      attrs.placed = !state.domains; // the first build starts from the hosts' places
      attrs.size = 2;
      D.addNode(name, attrs);
      if (!attrs.placed) fresh.push(name);
    }
  }
  for (const e of D.edges()) if (!weights.has(e)) D.dropEdge(e);
  for (const [key, w] of weights) {
    const i = key.indexOf('>');
    const s = key.slice(0, i), t = key.slice(i + 1);
    if (D.hasEdge(key)) {
      if (D.getEdgeAttribute(key, 'weight') !== w) D.mergeEdgeAttributes(key, { weight: w, size: edgeSize(w) });
    } else {
      D.addDirectedEdgeWithKey(key, s, t, { weight: w, size: edgeSize(w) });
    }
  }
  D.updateEachNodeAttributes((k, a) => {
    a.inW = D.inDegree(k) ? D.reduceInEdges(k, (sum, e, ea) => sum + ea.weight, 0) : 0;
    a.outW = D.outDegree(k) ? D.reduceOutEdges(k, (sum, e, ea) => sum + ea.weight, 0) : 0;
    return a;
  });
  state.domains = D;
  place(D, fresh);
}

// ---- style -----------------------------------------------------------------

// restyle sizes every node of the shown graph by PageRank (in-weight until
// ranks are known) and colours it by domain or community.
function restyle() {
  const G = shown();
  // PageRank once most hosts have one: a live crawl's ranks are computed
  // now and then, and the hosts found since have none yet.
  let withRank = 0;
  state.hosts.forEachNode((k, a) => { if (typeof a.pagerank === 'number') withRank++; });
  state.ranked = withRank > 0 && withRank >= 0.8 * state.hosts.order;
  const by = state.ranked ? 'pagerank' : 'inW';
  let max = 0;
  G.forEachNode((k, a) => { if ((a[by] || 0) > max) max = a[by] || 0; });
  const big = G.order > 5000;
  const lo = big ? 1.5 : 3, hi = big ? 14 : 18;
  defaultColouring();
  const comm = state.colour === 'community' ? communities(G) : null;
  G.updateEachNodeAttributes((k, a) => {
    a.size = max > 0 ? lo + (hi - lo) * Math.sqrt((a[by] || 0) / max) : lo;
    a.color = comm ? comm.colour(k) : nameColour(a.domain);
    return a;
  }); // no hints: with hints that leave out x and y, sigma repaints without
  // indexing, which fails on nodes added since its last frame
  state.legend = comm ? comm.legend : domainLegend(G);
  drawLegend(by);
}

// defaultColouring colours by community when there are more registrable
// domains than distinct colours (random colours of hundreds of domains
// show no structure), else by domain, until the user chooses.
function defaultColouring() {
  if (state.colourChosen) return;
  const domains = new Set();
  state.hosts.forEachNode((k, a) => { domains.add(a.domain); });
  const want = domains.size > PALETTE.length ? 'community' : 'domain';
  if (want === state.colour) return;
  state.colour = want;
  $('colour').value = want;
}

// communities finds the shown graph's Louvain communities (seeded: the
// same graph gives the same communities and colours on every load) and
// colours them, the biggest with the palette. A live graph's communities
// are found again only when it changed, at most every 5 s or twenty times
// what they cost, or when it grew by a tenth; in between, a new host takes
// the community of its heaviest link's other end. Communities found again
// keep the colour most of their hosts had, so colours do not shuffle as
// the graph grows.
function communities(G) {
  const prev = state.communities && state.communities.graph === G ? state.communities : null;
  if (prev && (prev.version === state.updates ||
      (performance.now() < prev.nextAt && G.order < prev.order * 1.1))) {
    prev.inherited.clear();
    return prev;
  }
  const t0 = performance.now();
  const of = G.size > 0 ? louvain(G, { getEdgeWeight: 'weight', rng: seededRandom(1) }) : {};
  const cost = performance.now() - t0;
  state.timings.communities = Math.round(cost);
  const sizes = new Map();
  const top = new Map();
  G.forEachNode((k, a) => {
    const c = of[k] ?? -1;
    sizes.set(c, (sizes.get(c) || 0) + 1);
    const t = top.get(c);
    if (!t || a.inW > t.inW) top.set(c, a);
  });
  const order = [...sizes.keys()].sort((a, b) => sizes.get(b) - sizes.get(a) || a - b);
  const colourOf = new Map();
  const used = new Set();
  if (prev) {
    // Each community takes the colour most of its hosts had, biggest
    // overlaps first, each colour once.
    const tally = new Map();
    G.forEachNode((k) => {
      if (!prev.known(k)) return;
      const c = of[k] ?? -1, was = prev.colour(k);
      let m = tally.get(c);
      if (!m) tally.set(c, (m = new Map()));
      m.set(was, (m.get(was) || 0) + 1);
    });
    const votes = [];
    for (const [c, m] of tally) for (const [colour, n] of m) votes.push([n, c, colour]);
    votes.sort((x, y) => y[0] - x[0] || x[1] - y[1] || (x[2] < y[2] ? -1 : 1));
    for (const [, c, colour] of votes) {
      if (colourOf.has(c) || used.has(colour)) continue;
      colourOf.set(c, colour);
      used.add(colour);
    }
  }
  const free = PALETTE.filter((p) => !used.has(p));
  order.forEach((c, i) => {
    if (colourOf.has(c)) return;
    colourOf.set(c, free.length && i < PALETTE.length * 2 ? free.shift() : mutedColour('community ' + i));
  });
  const legend = order.slice(0, 8).map((c) => ({
    colour: colourOf.get(c),
    text: 'around ' + top.get(c).label + ' (' + fmt(sizes.get(c)) + ')',
  }));
  if (order.length > 8) legend.push({ colour: '', text: '… and ' + fmt(order.length - 8) + ' more' });
  const inherited = new Map();
  const colour = (k) => {
    const c = of[k];
    if (c !== undefined) return colourOf.get(c);
    if (inherited.has(k)) return inherited.get(k);
    // Found since: the community of its heaviest link's other end.
    let best = -1, bestColour = '#a0a7b4';
    if (G.hasNode(k)) {
      G.forEachEdge(k, (e, a, s, t) => {
        const o = s === k ? t : s;
        if (of[o] !== undefined && a.weight > best) { best = a.weight; bestColour = colourOf.get(of[o]); }
      });
    }
    inherited.set(k, bestColour);
    return bestColour;
  };
  state.communities = {
    graph: G, version: state.updates, order: G.order, legend, inherited,
    nextAt: performance.now() + Math.max(5000, 20 * cost),
    known: (k) => of[k] !== undefined,
    colour,
  };
  return state.communities;
}

function seededRandom(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function domainLegend(G) {
  const count = new Map();
  G.forEachNode((k, a) => count.set(a.domain, (count.get(a.domain) || 0) + (state.view === 'domains' ? a.inW : 1)));
  return [...count.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)
    .map(([d, n]) => ({ colour: nameColour(d), text: d + (state.view === 'domains' ? '' : ' (' + n + ')') }));
}

function drawLegend(by) {
  const box = $('legend');
  box.replaceChildren();
  box.append(el('h3', {}, state.colour === 'community' ? 'Communities' : 'Registrable domains'));
  const ul = el('ul');
  for (const item of state.legend) {
    const dot = el('i');
    if (item.colour) dot.style.background = item.colour;
    ul.append(el('li', {}, dot, item.text));
  }
  box.append(ul);
  box.append(el('p', {}, 'Node size: ' + (by === 'pagerank' ? 'PageRank' : 'in-weight (links received)') + '.'));
  box.append(el('p', {}, 'Edge width: weight (times the link was seen).'));
}

// ---- drawing ---------------------------------------------------------------

// moving says whether sigma draws the current frame as a moving one
// (Sigma.render's own test, which hideEdgesOnMove follows).
function moving(r) {
  const mc = r.getMouseCaptor();
  return !!(r.getCamera().isAnimated() || mc.isMoving || mc.draggedEvents || mc.currentWheelDirection);
}

// MapSigma is sigma with a level of detail for camera moves over big
// graphs (see LOD_NODES): when lod is set and sigma hides edges on move,
// a moving frame clears only the layers it draws, leaves the picking
// texture blank, and its point program draws only the biggest nodes (the
// last ones of its buffer: nodeReducer's zIndex sorts nodes by size). A
// timer draws the whole graph once nothing moves any more, whatever ended
// the move (an animation, a drag, a wheel).
class MapSigma extends Sigma {
  render() {
    // Sigma's constructor renders before this class's fields exist.
    this.lodMoving = !!this.lod && this.getSetting('hideEdgesOnMove') && moving(this);
    super.render();
    if (this.lodMoving) {
      this.lodPicking = false;
      if (!this.lodTimer) this.lodTimer = setTimeout(() => this.lodSettle(), 80);
    } else {
      this.lodEdgesDrawn = true;
      this.lodPicking = true;
    }
    return this;
  }

  lodSettle() {
    this.lodTimer = null;
    if (moving(this)) this.lodTimer = setTimeout(() => this.lodSettle(), 80);
    else if (this.lodMoving) this.scheduleRender();
  }

  // clear in a moving frame leaves out the layers that renderHighlightedNodes
  // clears itself, the edge labels (never drawn), and the edges once cleared.
  clear() {
    if (!this.lodMoving) return super.clear();
    this.emit('beforeClear');
    const n = this.webGLContexts.nodes;
    n.bindFramebuffer(n.FRAMEBUFFER, null);
    n.clear(n.COLOR_BUFFER_BIT);
    if (this.lodEdgesDrawn) {
      const e = this.webGLContexts.edges;
      e.bindFramebuffer(e.FRAMEBUFFER, null);
      e.clear(e.COLOR_BUFFER_BIT);
      this.lodEdgesDrawn = false;
    }
    this.canvasContexts.labels.clearRect(0, 0, this.width, this.height);
    this.emit('afterClear');
    return this;
  }

  // resetWebGLTexture blanks the picking texture once when a move starts,
  // so that nothing is picked from a stale frame, and not again until it
  // stops.
  resetWebGLTexture(id) {
    if (this.lodMoving && !this.lodPicking) return this;
    return super.resetWebGLTexture(id);
  }
}

// LodPointProgram is sigma's point program, which in a moving frame of a
// MapSigma with lod draws only the last LOD_NODES nodes of its buffer, and
// only their labels, and skips the picking pass.
class LodPointProgram extends NodePointProgram {
  constructor(...args) {
    super(...args);
    // Set here, not as a method: sigma's programs may have a drawLabel field.
    this.drawLabel = (context, data, settings) => {
      if (this.lodLeavesOut(data.key)) return;
      settings.defaultDrawNodeLabel(context, data, settings);
    };
  }

  lodLeavesOut(key) {
    const r = this.renderer;
    if (!r.lodMoving) return false;
    const i = r.nodeProgramIndex[key];
    return i !== undefined && i < this.verticesCount - LOD_NODES;
  }

  render(params) {
    if (!this.renderer.lodMoving) return super.render(params);
    if (this.hasNothingToRender()) return;
    const p = this.normalProgram;
    p.gl.viewport(0, 0, params.width * params.pixelRatio, params.height * params.pixelRatio);
    this.bindProgram(p);
    this.renderProgram(params, p);
    this.unbindProgram(p);
  }

  drawWebGL(method, info) {
    if (!this.renderer.lodMoving || info.isPicking || this.isInstanced) return super.drawWebGL(method, info);
    const { gl, frameBuffer } = info;
    gl.bindFramebuffer(gl.FRAMEBUFFER, frameBuffer);
    const k = Math.min(this.verticesCount, LOD_NODES);
    gl.drawArrays(method, this.verticesCount - k, k);
  }
}

// ---- without WebGL: a canvas-2D renderer ------------------------------------

// straightColour turns a colour given to sigma (#rrggbbaa premultiplied,
// see sigmaColour) back into a CSS colour.
function straightColour(c) {
  if (typeof c !== 'string' || c.length !== 9 || c[0] !== '#') return c;
  const a = parseInt(c.slice(7, 9), 16) / 255;
  if (a === 0) return 'rgba(0,0,0,0)';
  const ch = (i) => Math.min(255, Math.round(parseInt(c.slice(i, i + 2), 16) / a));
  return 'rgba(' + ch(1) + ',' + ch(3) + ',' + ch(5) + ',' + a.toFixed(3) + ')';
}

// Camera2D is where Canvas2DMap looks: x and y in framed coordinates (the
// graph fitted into [0, 1]², as sigma's camera), ratio > 1 zoomed out.
class Camera2D {
  constructor(changed, minRatio, maxRatio) {
    this.x = 0.5;
    this.y = 0.5;
    this.ratio = 1;
    this.angle = 0;
    this.changed = changed;
    this.minRatio = minRatio;
    this.maxRatio = maxRatio;
    this.animation = null;
  }

  getState() { return { x: this.x, y: this.y, ratio: this.ratio, angle: 0 }; }

  setState(s) {
    if (typeof s.x === 'number') this.x = s.x;
    if (typeof s.y === 'number') this.y = s.y;
    if (typeof s.ratio === 'number') this.ratio = Math.max(this.minRatio, Math.min(this.maxRatio, s.ratio));
    this.changed();
    return this;
  }

  isAnimated() { return this.animation !== null; }

  animate(to, opts = {}) {
    const from = this.getState();
    const duration = opts.duration ?? 300;
    const t0 = performance.now();
    if (this.animation) cancelAnimationFrame(this.animation);
    const step = () => {
      const t = Math.min(1, (performance.now() - t0) / duration);
      const e = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2; // ease in and out
      const at = (k) => (typeof to[k] === 'number' ? from[k] + (to[k] - from[k]) * e : from[k]);
      this.animation = t < 1 ? requestAnimationFrame(step) : null;
      this.setState({ x: at('x'), y: at('y'), ratio: at('ratio') });
    };
    this.animation = requestAnimationFrame(step);
    return Promise.resolve();
  }
}

// Canvas2DMap draws the graph on a 2D canvas, for browsers without WebGL:
// the same map as sigma's (sizes, colours, links with arrows, labels,
// hover, click, drag and wheel), slower on big graphs. It offers the part
// of sigma's interface that the page and its tests use: refresh,
// setGraph, get/setSetting, getCamera, getNodeDisplayData,
// framedGraphToViewport, getNodeAtPosition and the node events.
class Canvas2DMap {
  constructor(graph, container, settings) {
    this.container = container;
    this.settings = { ...settings };
    this.handlers = {};
    this.canvas = document.createElement('canvas');
    this.canvas.style.cssText = 'position:absolute;left:0;top:0;width:100%;height:100%;';
    container.append(this.canvas);
    this.ctx = this.canvas.getContext('2d');
    this.camera = new Camera2D(() => { this.movedAt = performance.now(); this.scheduleRender(); },
      settings.minCameraRatio || 0.005, settings.maxCameraRatio || 20);
    this.movedAt = -Infinity;
    this.frame = null; // requestAnimationFrame's id
    this.lastRender = 0;
    this.renderCost = 0;
    this.drawn = []; // the nodes of the last frame, in drawing order
    this.hovered = null;
    this.graphChanged = () => this.scheduleRender();
    this.setGraph(graph);
    this.resize();
    window.addEventListener('resize', () => { this.resize(); this.scheduleRender(); });
    if (window.ResizeObserver) new ResizeObserver(() => { this.resize(); this.scheduleRender(); }).observe(container);
    this.bindMouse();
  }

  on(event, fn) { (this.handlers[event] ||= []).push(fn); return this; }
  emit(event, payload) { for (const fn of this.handlers[event] || []) fn(payload); }
  getSetting(k) { return this.settings[k]; }
  setSetting(k, v) { this.settings[k] = v; this.scheduleRender(); return this; }
  getCamera() { return this.camera; }
  getGraph() { return this.graph; }
  refresh() { this.scheduleRender(); return this; }

  setGraph(graph) {
    const events = ['nodeAdded', 'edgeAdded', 'nodeDropped', 'edgeDropped', 'cleared', 'edgesCleared',
      'nodeAttributesUpdated', 'edgeAttributesUpdated', 'eachNodeAttributesUpdated', 'eachEdgeAttributesUpdated'];
    if (this.graph) for (const e of events) this.graph.removeListener(e, this.graphChanged);
    this.graph = graph;
    for (const e of events) graph.on(e, this.graphChanged);
    this.scheduleRender();
  }

  resize() {
    const r = this.container.getBoundingClientRect();
    this.width = Math.max(1, r.width);
    this.height = Math.max(1, r.height);
    this.dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(this.width * this.dpr);
    this.canvas.height = Math.round(this.height * this.dpr);
  }

  // moving: the camera moves (an animation, a drag, a wheel) or did in
  // the last 150 ms.
  moving() {
    return this.camera.isAnimated() || this.dragging || performance.now() - this.movedAt < 150;
  }

  // scheduleRender draws at the next animation frame; while a frame costs
  // much (a big graph, the layout running), not more often than every four
  // times its cost, so the page stays responsive.
  // A move is drawn at the next frame even when a throttled frame waits:
  // a camera that moves under a picture that does not is a frozen map.
  scheduleRender() {
    if (this.frame !== null) return;
    const moving = this.moving();
    if (this.timer) {
      if (!moving) return;
      clearTimeout(this.timer);
      this.timer = null;
    }
    const wait = this.lastRender + 4 * this.renderCost - performance.now();
    if (this.renderCost > 40 && wait > 0 && !moving) {
      this.timer = setTimeout(() => { this.timer = null; this.scheduleRender(); }, wait);
      return;
    }
    this.frame = requestAnimationFrame(() => { this.frame = null; this.render(); });
  }

  // The graph's extent, and from it sigma's framing: the graph fitted
  // into [0, 1]², its aspect kept.
  frameGraph() {
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    this.graph.forEachNode((k, a) => {
      if (a.x < minX) minX = a.x;
      if (a.x > maxX) maxX = a.x;
      if (a.y < minY) minY = a.y;
      if (a.y > maxY) maxY = a.y;
    });
    if (minX === Infinity) minX = maxX = minY = maxY = 0;
    this.box = { cx: (minX + maxX) / 2, cy: (minY + maxY) / 2, span: Math.max(maxX - minX, maxY - minY) || 1 };
  }

  framed(a) {
    const b = this.box;
    return { x: 0.5 + (a.x - b.cx) / b.span, y: 0.5 + (a.y - b.cy) / b.span };
  }

  scale() { return Math.max(1, Math.min(this.width, this.height) - 60) / this.camera.ratio; }

  framedGraphToViewport(p) {
    const s = this.scale(), c = this.camera;
    return { x: this.width / 2 + (p.x - c.x) * s, y: this.height / 2 - (p.y - c.y) * s };
  }

  viewportToFramedGraph(p) {
    const s = this.scale(), c = this.camera;
    return { x: c.x + (p.x - this.width / 2) / s, y: c.y - (p.y - this.height / 2) / s };
  }

  getNodeDisplayData(key) {
    if (!this.graph.hasNode(key)) return undefined;
    if (!this.box) this.frameGraph();
    const a = this.graph.getNodeAttributes(key);
    return { ...this.framed(a), size: a.size, color: a.color, label: a.label };
  }

  // getNodeAtPosition is the node drawn at a point of the viewport, the
  // topmost, or null.
  getNodeAtPosition(p) {
    for (let i = this.drawn.length - 1; i >= 0; i--) {
      const n = this.drawn[i];
      const r = Math.max(n.r, 3);
      if ((n.x - p.x) ** 2 + (n.y - p.y) ** 2 <= r * r) return n.key;
    }
    return null;
  }

  sizeRatio() { return Math.sqrt(this.camera.ratio); }

  render() {
    const t0 = performance.now();
    const ctx = this.ctx, W = this.width, H = this.height;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    this.frameGraph();
    const moving = this.moving();
    // As MapSigma's: whether this frame is a level-of-detail one.
    this.lodMoving = moving && !!this.lod && !!this.settings.hideEdgesOnMove;
    const zoom = this.sizeRatio();
    const nodes = [];
    const at = new Map();
    this.graph.forEachNode((key, a) => {
      const d = this.settings.nodeReducer ? this.settings.nodeReducer(key, a) : a;
      if (d.hidden) return;
      const v = this.framedGraphToViewport(this.framed(d));
      const n = { key, x: v.x, y: v.y, r: (d.size || 2) / zoom, color: d.color || '#999', label: d.label,
        z: d.zIndex || 0, highlighted: !!d.highlighted };
      nodes.push(n);
      at.set(key, n);
    });
    nodes.sort((p, q) => p.z - q.z || p.r - q.r);
    let shown = nodes;
    if (moving && this.lod && this.settings.hideEdgesOnMove && nodes.length > LOD_NODES) {
      shown = nodes.slice().sort((p, q) => p.r - q.r).slice(nodes.length - LOD_NODES);
    }
    if (!(moving && this.settings.hideEdgesOnMove)) this.drawEdges(at, zoom);
    for (const n of shown) {
      if (n.x < -n.r || n.y < -n.r || n.x > W + n.r || n.y > H + n.r) continue;
      ctx.beginPath();
      ctx.arc(n.x, n.y, Math.max(n.r, 1), 0, 2 * Math.PI);
      ctx.fillStyle = n.color;
      ctx.fill();
      if (n.highlighted) {
        ctx.lineWidth = 3;
        ctx.strokeStyle = '#fff';
        ctx.stroke();
        ctx.lineWidth = 1;
        ctx.strokeStyle = '#1d2330';
        ctx.stroke();
      }
    }
    this.drawLabels(shown);
    this.drawn = moving ? [] : nodes; // nothing is picked mid-move
    this.lastRender = performance.now();
    this.renderCost = this.lastRender - t0;
    if (moving) setTimeout(() => this.scheduleRender(), 160); // the whole graph once it stops
    this.emit('afterRender');
  }

  // drawEdges strokes the links as straight lines, one path per colour
  // and width, with arrow heads at their targets when the page asks.
  drawEdges(at, zoom) {
    const ctx = this.ctx;
    const groups = new Map();
    this.graph.forEachEdge((key, a, s, t) => {
      const d = this.settings.edgeReducer ? this.settings.edgeReducer(key, a) : a;
      if (d.hidden) return;
      const p = at.get(s), q = at.get(t);
      if (!p || !q) return;
      const width = Math.max(0.5, Math.round((d.size || 1) / zoom * 2) / 2);
      const colour = straightColour(d.color || this.settings.defaultEdgeColor);
      const g = colour + ' ' + width + ' ' + (d.type === 'arrow' ? 'a' : 'l');
      let list = groups.get(g);
      if (!list) groups.set(g, (list = { colour, width, arrow: d.type === 'arrow', z: d.zIndex || 0, edges: [] }));
      list.edges.push(p, q);
    });
    const ordered = [...groups.values()].sort((x, y) => x.z - y.z);
    for (const g of ordered) {
      ctx.strokeStyle = g.colour;
      ctx.fillStyle = g.colour;
      ctx.lineWidth = g.width;
      ctx.beginPath();
      const heads = [];
      for (let i = 0; i < g.edges.length; i += 2) {
        const p = g.edges[i], q = g.edges[i + 1];
        if (p === q) continue;
        let ex = q.x, ey = q.y;
        if (g.arrow) {
          const dx = q.x - p.x, dy = q.y - p.y, len = Math.hypot(dx, dy);
          const head = 2 * g.width + 3;
          if (len > q.r + head + 1) {
            const ux = dx / len, uy = dy / len;
            const tipX = q.x - ux * q.r, tipY = q.y - uy * q.r;
            ex = tipX - ux * head;
            ey = tipY - uy * head;
            heads.push(tipX, tipY, ux, uy, head);
          }
        }
        ctx.moveTo(p.x, p.y);
        ctx.lineTo(ex, ey);
      }
      ctx.stroke();
      if (heads.length) {
        ctx.beginPath();
        for (let i = 0; i < heads.length; i += 5) {
          const [x, y, ux, uy, h] = heads.slice(i, i + 5);
          const w = h * 0.5;
          ctx.moveTo(x, y);
          ctx.lineTo(x - ux * h - uy * w, y - uy * h + ux * w);
          ctx.lineTo(x - ux * h + uy * w, y - uy * h - ux * w);
          ctx.closePath();
        }
        ctx.fill();
      }
    }
  }

  // drawLabels labels nodes drawn at least labelRenderedSizeThreshold
  // pixels wide, the biggest first, leaving out a label that would cover
  // one already drawn (highlighted nodes always have theirs).
  drawLabels(nodes) {
    const ctx = this.ctx;
    const min = (this.settings.labelRenderedSizeThreshold || 9) * 0.8;
    ctx.font = '14px Arial, sans-serif';
    ctx.textBaseline = 'middle';
    const CELL = 64;
    const cells = new Map(); // a grid of the label boxes drawn
    const fits = (box, add) => {
      const x0 = Math.floor(box[0] / CELL), x1 = Math.floor(box[2] / CELL);
      const y0 = Math.floor(box[1] / CELL), y1 = Math.floor(box[3] / CELL);
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const k = x + ',' + y;
          if (add) {
            if (!cells.has(k)) cells.set(k, []);
            cells.get(k).push(box);
          } else {
            for (const b of cells.get(k) || []) {
              if (box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3]) return false;
            }
          }
        }
      }
      return true;
    };
    const candidates = nodes.filter((n) => n.label && (n.highlighted || n.r >= min))
      .sort((p, q) => (q.highlighted - p.highlighted) || q.r - p.r);
    let drawn = 0;
    for (const n of candidates) {
      if (n.x < 0 || n.y < 0 || n.x > this.width || n.y > this.height) continue;
      if (!n.highlighted && drawn >= 400) break;
      const w = ctx.measureText(n.label).width;
      const box = [n.x + n.r + 2, n.y - 9, n.x + n.r + 8 + w, n.y + 9];
      if (!n.highlighted && !fits(box, false)) continue;
      fits(box, true);
      drawn++;
      if (n.highlighted) {
        ctx.fillStyle = '#fff';
        ctx.fillRect(box[0], box[1], box[2] - box[0], box[3] - box[1]);
      }
      ctx.fillStyle = '#000';
      ctx.fillText(n.label, n.x + n.r + 4, n.y);
    }
  }

  // bindMouse: drag to pan, the wheel to zoom about the pointer, hover and
  // click nodes.
  bindMouse() {
    const c = this.canvas;
    const point = (ev) => {
      const r = c.getBoundingClientRect();
      return { x: ev.clientX - r.left, y: ev.clientY - r.top };
    };
    let down = null;
    c.addEventListener('mousedown', (ev) => {
      if (ev.button !== 0) return;
      down = { ...point(ev), cam: this.camera.getState(), moved: false };
    });
    window.addEventListener('mousemove', (ev) => {
      const p = point(ev);
      if (down) {
        if (!down.moved && Math.hypot(p.x - down.x, p.y - down.y) < 3) return;
        down.moved = true;
        this.dragging = true;
        const s = this.scale();
        this.camera.setState({ x: down.cam.x - (p.x - down.x) / s, y: down.cam.y + (p.y - down.y) / s });
        return;
      }
      const key = ev.target === c ? this.getNodeAtPosition(p) : null;
      if (key === this.hovered) return;
      if (this.hovered !== null) this.emit('leaveNode', { node: this.hovered });
      this.hovered = key;
      if (key !== null) this.emit('enterNode', { node: key });
    });
    window.addEventListener('mouseup', (ev) => {
      if (!down) return;
      const was = down;
      down = null;
      this.dragging = false;
      if (was.moved) { this.movedAt = performance.now(); this.scheduleRender(); return; }
      const key = this.getNodeAtPosition(point(ev));
      if (key !== null) this.emit('clickNode', { node: key });
      else this.emit('clickStage', {});
    });
    c.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const p = point(ev);
      const f = this.viewportToFramedGraph(p);
      const cam = this.camera;
      const ratio = Math.max(cam.minRatio, Math.min(cam.maxRatio, cam.ratio * Math.pow(1.0015, ev.deltaY)));
      const s = Math.max(1, Math.min(this.width, this.height) - 60) / ratio;
      cam.setState({ ratio, x: f.x - (p.x - this.width / 2) / s, y: f.y + (p.y - this.height / 2) / s });
    }, { passive: false });
  }
}

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

// webGLMissing says why this browser cannot draw with WebGL (sigma.js
// needs it), or '' when it can. Remote desktops, virtual machines and
// chromium --disable-3d-apis have none.
function webGLMissing() {
  try {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl2') || c.getContext('webgl') || c.getContext('experimental-webgl');
    if (!gl) return 'this browser offers no WebGL';
    const lose = gl.getExtension('WEBGL_lose_context');
    if (lose) lose.loseContext(); // a probe: give the context back at once
    return '';
  } catch (err) {
    return 'WebGL failed: ' + err.message;
  }
}

// showNoWebGL says, above the map, that the browser has no WebGL, so the
// map is drawn without it (Canvas2DMap, slower on big graphs), what to
// try, and how to get the graph without the map.
function showNoWebGL() {
  const box = $('notice');
  if (!box.hidden || box.dataset.closed) return;
  const code = (t) => el('code', {}, t);
  const ways = el('li', {}, 'Take the graph without the map: ', code('weaver export --graphml graph.graphml'),
    ' (for Gephi, Cytoscape or yEd) or ', code('weaver export --sqlite graph.db'), ' (for SQL), once the crawl has ended.');
  if (config.live && config.graph) {
    const sep = config.graph.includes('?') ? '&' : '?';
    ways.append(' While it runs: ', el('a', { href: config.graph + sep + 'format=graphml', download: 'graph.graphml' }, 'this graph as GraphML'), '.');
  }
  const close = el('button', { type: 'button', class: 'close', title: 'Close', 'aria-label': 'Close' }, '×');
  close.addEventListener('click', () => { box.hidden = true; box.dataset.closed = '1'; });
  box.replaceChildren(close, el('details', {},
    el('summary', {}, el('b', {}, 'This browser has no WebGL'), ': the map is drawn without it, slower on big graphs. What to try…'),
    el('p', {}, 'The map draws with WebGL (sigma.js), which this browser does not offer: it is turned off, ' +
      'or there is no graphics acceleration, as on remote desktops, in virtual machines and with chromium --disable-3d-apis ' +
      '(' + state.noWebGL + ').'),
    el('ul', {},
      el('li', {}, 'Turn on hardware acceleration and reload: in Chrome, Chromium and Edge, Settings → System → ' +
        '“Use graphics acceleration when available” (chrome://gpu says whether WebGL works); in Firefox, Settings → ' +
        'Performance, and webgl.disabled = false in about:config.'),
      el('li', {}, 'Open the page in another browser or on another machine: ', code('weaver export --html map.html'),
        ' writes it as one file that opens from disk.'),
      ways)));
  box.hidden = false;
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
  });
}

function refocus() {
  const G = shown();
  const f = state.hovered ?? state.selected;
  state.focusNeighbours = f !== null && G.hasNode(f) ? new Set(G.neighbors(f)) : null;
  $('graph').style.cursor = state.hovered !== null ? 'pointer' : '';
  showInfo(f);
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

// ---- panels ----------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

const fmt = (n) => Number(n).toLocaleString('en-US');

function showInfo(key) {
  const box = $('info');
  const G = shown();
  if (key === null || !G.hasNode(key)) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const a = G.getNodeAttributes(key);
  box.replaceChildren();
  box.dataset.node = key;
  box.append(el('h2', { class: 'host' }, a.label));
  box.append(el('p', { class: 'title' }, a.title || '(no title)'));
  const rows = [
    ['status', a.status || '—'],
    ['HTTP status', a.http || '—'],
  ];
  if (state.view === 'domains') rows.push(['hosts', fmt(a.hosts)]);
  else rows.push(['domain', a.domain]);
  rows.push(['PageRank', typeof a.pagerank === 'number' ? a.pagerank.toPrecision(4) : 'not computed']);
  if (typeof a.harmonic === 'number') rows.push(['harmonic', a.harmonic.toPrecision(5)]);
  rows.push(['in-weight', fmt(a.inW) + ' from ' + fmt(G.inDegree(key)) + ' ' + state.view]);
  rows.push(['out-weight', fmt(a.outW) + ' to ' + fmt(G.outDegree(key)) + ' ' + state.view]);
  if (state.view === 'hosts') {
    rows.push(['depth', a.depth], ['crawls', a.crawls]);
    if (a.pages) rows.push(['pages fetched', fmt(a.pages)]);
    if (a.canonical) rows.push(['canonical', a.canonical]);
    if (a.robots) rows.push(['robots', a.robots]);
    if (a.mirrorOf) rows.push(['mirror of', G.hasNode(a.mirrorOf) ? G.getNodeAttribute(a.mirrorOf, 'label') : '#' + a.mirrorOf]);
    if (a.renderMS) rows.push(['rendered', fmt(a.renderMS) + ' ms']);
  }
  const table = el('table');
  for (const [k, v] of rows) table.append(el('tr', {}, el('td', {}, k), el('td', {}, v)));
  box.append(table);
  const list = (title, edges) => {
    box.append(el('h3', {}, title + ' (' + fmt(edges.length) + ')'));
    const ol = el('ol');
    edges.sort((x, y) => y.w - x.w);
    for (const e of edges.slice(0, 15)) {
      const link = el('a', { 'data-node': e.other }, G.getNodeAttribute(e.other, 'label'));
      link.addEventListener('click', () => focus(e.other));
      ol.append(el('li', {}, link, el('span', {}, '× ' + fmt(e.w))));
    }
    if (edges.length > 15) ol.append(el('li', {}, el('span', {}, '… and ' + fmt(edges.length - 15) + ' more')));
    box.append(ol);
  };
  const ins = [], outs = [];
  G.forEachInEdge(key, (e, ea, s) => ins.push({ other: s, w: ea.weight }));
  G.forEachOutEdge(key, (e, ea, s, t) => outs.push({ other: t, w: ea.weight }));
  list('Linked from', ins);
  list('Links to', outs);
  box.hidden = false;
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

// ---- layout ----------------------------------------------------------------

let fa2 = null;
let layoutTimer = null;
let layoutUntil = 0;
let lastSample = null;

function layoutBudget(G) {
  if (G.order <= 2000) return 15000;
  if (G.order <= 10000) return 10000;
  return 6000;
}

function startLayout(ms) {
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

function stopLayout() {
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
  if (res.fresh > 0) startLayout(state.fullLoads === 1 && full ? layoutBudget(shown()) : 3000);
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
  if (fa2) { fa2.kill(); fa2 = null; }
  stopLayout();
  state.view = view;
  state.hovered = null;
  state.selected = null;
  state.communities = null;
  if (view === 'domains') buildDomains();
  restyle();
  updateStats();
  if (renderer) renderer.setGraph(shown());
  refocus();
  if (view === 'domains' && !state.domainsLaidOut) {
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
    if (fa2 && fa2.isRunning()) stopLayout();
    else startLayout(30000);
  });
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
  layoutRunning: () => !!(fa2 && fa2.isRunning()),
  focus,
  select,
  setView,
  // The links' colour as a CSS colour (sigma is given it premultiplied).
  edgeColour: () => EDGE_RGB + hex2(edgeAlpha()),
  palette: PALETTE,
};

main();
