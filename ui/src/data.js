// The graph's data: merging what the page is given into the host graph,
// placing new hosts, and collapsing hosts into registrable domains.

import louvain from 'graphology-communities-louvain';
import { state, newGraph } from './state.js';
import { config, seededRandom } from './dom.js';

export function edgeSize(w) {
  return Math.min(6, 1.2 + Math.log2(w) * 0.7);
}

// STORED_SHARE is the share of a full answer's hosts that must come with
// a position (community) for the page to draw the store's layout (to
// colour by the store's communities): a live crawl's newest hosts may
// have none yet, and take their neighbours'.
const STORED_SHARE = 0.9;

const finite = (v) => typeof v === 'number' && Number.isFinite(v);
const time = (s) => (s ? Date.parse(s) || 0 : 0);

// ingest merges an answer of the data URL, or a node-link export, into the
// host graph. A full answer replaces the graph's content, keeping the
// positions of the hosts it already had, unless it carries the store's
// layout (x and y on nodes, written by weaver layout): then the hosts are
// drawn where it puts them, and the page runs no layout of its own.
export function ingest(data, full) {
  const H = state.hosts;
  const nodes = data.nodes || [];
  const edges = data.edges || [];
  const seenNodes = full ? new Set() : null;
  const seenEdges = full ? new Set() : null;
  const fresh = [];
  let withPos = 0, withCommunity = 0;
  const moved = []; // hosts whose stored position is new or changed
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
      changes: n.changes || 0,
      lastChange: time(n.last_change),
    };
    const lastCrawl = time(n.last_crawl);
    state.newest = Math.max(state.newest, lastCrawl, attrs.lastChange);
    if (typeof n.pagerank === 'number') attrs.pagerank = n.pagerank;
    if (typeof n.harmonic === 'number') attrs.harmonic = n.harmonic;
    if (Number.isInteger(n.community)) {
      attrs.community = n.community;
      withCommunity++;
    }
    const pos = finite(n.x) && finite(n.y);
    if (pos) {
      withPos++;
      attrs.sx = n.x;
      attrs.sy = n.y;
    }
    if (H.hasNode(key)) {
      const a = H.getNodeAttributes(key);
      if (pos && (a.sx !== n.x || a.sy !== n.y)) moved.push(key);
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
      if (pos) moved.push(key);
    }
  }
  if (full) {
    state.stored = nodes.length > 0 && withPos >= STORED_SHARE * nodes.length;
    state.storedCommunities = nodes.length > 0 && withCommunity >= STORED_SHARE * nodes.length;
  }
  if (state.stored) {
    for (const key of moved) {
      const a = H.getNodeAttributes(key);
      H.mergeNodeAttributes(key, { x: a.sx, y: a.sy, placed: true });
    }
  }
  if (config.live && data.cursor) {
    // The live answer's cursor is the newest time stamped in the store
    // (Unix nanoseconds): the crawl's now.
    const ms = Number(String(data.cursor).slice(0, -6));
    if (ms > 0) state.newest = Math.max(state.newest, ms);
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
  return { fresh: fresh.length, moved: state.stored ? moved.length : 0, changed: nodes.length + edges.length + dropped };
}

// place gives new nodes a position near the nodes they link with, so that
// a growing graph does not jump: breadth first from the placed ones, each
// node at the mean of its placed neighbours, a little off. A node with no
// placed neighbour starts a component at a random spot. When no node is
// placed yet (a graph without the store's layout, at its first load),
// every node is placed by community instead (placeByCommunity).
export function place(G, keys) {
  const todo = new Set();
  for (const k of keys) if (G.hasNode(k) && !G.getNodeAttribute(k, 'placed')) todo.add(k);
  if (todo.size === 0) return;
  if (todo.size === G.order && G.order > 2) {
    placeByCommunity(G);
    return;
  }
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

// placeByCommunity places every node of G where weaver layout starts
// ForceAtlas2: by Louvain community (seeded, as the colours'), the
// communities' centres on a sunflower spiral, the largest in the middle,
// each community's nodes at random in a disc whose area grows with its
// size. So the first frame already shows the groups, and the page's
// layout then moves hosts within them more than the groups themselves
// (from one spot, breadth first, ForceAtlas2 pulled a hairball apart for
// seconds, whole groups crossing the map). The communities are kept for
// the colours (state.louvain).
export function placeByCommunity(G) {
  const of = louvainOf(G);
  const size = new Map();
  G.forEachNode((k) => {
    const c = of[k] ?? -1;
    size.set(c, (size.get(c) || 0) + 1);
  });
  const order = [...size.keys()].sort((a, b) => size.get(b) - size.get(a) || a - b);
  const golden = Math.PI * (3 - Math.sqrt(5));
  const centre = new Map();
  let area = 0;
  order.forEach((c, i) => {
    area += size.get(c);
    const r = i === 0 ? 0 : 10 * Math.sqrt(area);
    centre.set(c, [r * Math.cos(i * golden), r * Math.sin(i * golden)]);
  });
  const rnd = seededRandom(2);
  G.updateEachNodeAttributes((k, a) => {
    const c = of[k] ?? -1;
    const [cx, cy] = centre.get(c);
    const r = 5 * Math.sqrt(size.get(c)) * Math.sqrt(rnd());
    const t = rnd() * 2 * Math.PI;
    a.x = cx + r * Math.cos(t);
    a.y = cy + r * Math.sin(t);
    a.placed = true;
    return a;
  });
}

// louvainOf returns G's Louvain communities, node → community, seeded so
// that a graph gets the same ones on every load; the last ones found are
// kept (state.louvain) and given again while G has the same nodes and
// links (the placement's serve the colours).
export function louvainOf(G) {
  const l = state.louvain;
  if (l && l.graph === G && l.order === G.order && l.size === G.size && l.weight === totalWeight(G)) return l.of;
  const of = G.size > 0 ? louvain(G, { getEdgeWeight: 'weight', rng: seededRandom(1) }) : {};
  state.louvain = { graph: G, order: G.order, size: G.size, weight: totalWeight(G), of };
  return of;
}

function totalWeight(G) {
  let w = 0;
  G.forEachEdge((e, a) => { w += a.weight; });
  return w;
}

// buildDomains collapses the host graph into registrable domains, summing
// weights and leaving out links inside a domain. Domains already drawn keep
// their place; new ones start where their hosts are.
export function buildDomains() {
  const H = state.hosts;
  const D = state.domains || newGraph();
  const agg = new Map();
  H.forEachNode((k, a) => {
    let d = agg.get(a.domain);
    if (!d) {
      d = { hosts: 0, inW: 0, outW: 0, pagerank: 0, sx: 0, sy: 0, top: null, topW: -1, changes: 0, lastChange: 0 };
      agg.set(a.domain, d);
    }
    d.hosts++;
    d.changes += a.changes || 0;
    d.lastChange = Math.max(d.lastChange, a.lastChange || 0);
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
      inW: 0, outW: 0, changes: d.changes, lastChange: d.lastChange,
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
