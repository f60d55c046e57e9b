// Sizes, colours and the legend: what the map's marks mean.

import { $, el, fmt } from './dom.js';
import { state, shown } from './state.js';
import { louvainOf } from './data.js';
import { PALETTE, NO_COMMUNITY, nameColour, mutedColour } from './colours.js';

// edgeAlpha is the links' opacity: more transparent the more links are
// drawn, so that a dense graph's links shade its middle without drowning
// the hosts.
export function edgeAlpha() {
  const n = Math.max(1, state.drawnEdges);
  return Math.max(0.12, Math.min(0.6, 0.55 * Math.sqrt(1000 / n)));
}

// restyle sizes every node of the shown graph by PageRank (in-weight until
// ranks are known), colours it by domain or community, and marks the
// hosts changed recently.
export function restyle() {
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
  markChanged();
  drawLegend(by);
}

// defaultColouring colours by community when the store gave communities,
// or when there are more registrable domains than distinct colours
// (random colours of hundreds of domains show no structure), else by
// domain, until the user chooses.
function defaultColouring() {
  if (state.colourChosen) return;
  const domains = new Set();
  state.hosts.forEachNode((k, a) => { domains.add(a.domain); });
  const want = state.storedCommunities || domains.size > PALETTE.length ? 'community' : 'domain';
  if (want === state.colour) return;
  state.colour = want;
  $('colour').value = want;
}

// communityOf is the shown graph's communities, node → community: the
// store's (weaver layout's, on each host) when it gave them, else
// Louvain's, seeded, so that the same graph gives the same communities
// and colours on every load.
function communityOf(G) {
  if (state.storedCommunities && G === state.hosts) {
    const of = {};
    G.forEachNode((k, a) => { if (a.community !== undefined) of[k] = a.community; });
    return of;
  }
  return louvainOf(G);
}

// communities colours the shown graph's communities, the biggest with
// the palette. A live graph's Louvain communities are found again only
// when it changed, at most every 5 s or twenty times what they cost, or
// when it grew by a tenth; in between, a new host takes the community of
// its heaviest link's other end (as does a host the store gave no
// community). Communities found again keep the colour most of their hosts
// had, so colours do not shuffle as the graph grows.
function communities(G) {
  const prev = state.communities && state.communities.graph === G ? state.communities : null;
  if (prev && (prev.version === state.updates ||
      (performance.now() < prev.nextAt && G.order < prev.order * 1.1))) {
    prev.inherited.clear();
    return prev;
  }
  const t0 = performance.now();
  const of = communityOf(G);
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
    text: 'around ' + top.get(c).label,
    count: fmt(sizes.get(c)),
  }));
  if (order.length > 8) legend.push({ colour: '', text: '… and ' + fmt(order.length - 8) + ' more' });
  const inherited = new Map();
  const colour = (k) => {
    const c = of[k];
    if (c !== undefined) return colourOf.get(c);
    if (inherited.has(k)) return inherited.get(k);
    // Found since: the community of its heaviest link's other end.
    let best = -1, bestColour = NO_COMMUNITY;
    if (G.hasNode(k)) {
      G.forEachEdge(k, (e, a, s, t) => {
        const o = s === k ? t : s;
        if (of[o] !== undefined && a.weight > best) { best = a.weight; bestColour = colourOf.get(of[o]); }
      });
    }
    inherited.set(k, bestColour);
    return bestColour;
  };
  // The store's communities cost a pass over the hosts: taken again at
  // every update.
  const stored = state.storedCommunities && G === state.hosts;
  state.communities = {
    graph: G, version: state.updates, order: G.order, legend, inherited,
    nextAt: stored ? 0 : performance.now() + Math.max(5000, 20 * cost),
    known: (k) => of[k] !== undefined,
    colour,
  };
  return state.communities;
}

function domainLegend(G) {
  const count = new Map();
  G.forEachNode((k, a) => count.set(a.domain, (count.get(a.domain) || 0) + (state.view === 'domains' ? a.inW : 1)));
  return [...count.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)
    .map(([d, n]) => ({ colour: nameColour(d), text: d, count: state.view === 'domains' ? '' : fmt(n) }));
}

// markChanged finds the hosts (domains) of the shown graph whose last
// change (a revisit that found other content or other links, issue 27)
// came within state.changedWithin of the newest crawl the page knows of:
// the map rings them. The newest crawl, not the browser's clock, so that
// a map exported after the crawl shows what changed at its end.
export function markChanged() {
  const G = shown();
  const since = state.newest - state.changedWithin;
  const changed = new Set();
  let history = false;
  G.forEachNode((k, a) => {
    if (!a.changes) return;
    history = true;
    if (a.lastChange > 0 && a.lastChange >= since) changed.add(k);
  });
  state.changed = changed;
  state.changeHistory = history;
}

function drawLegend(by) {
  const colours = $('legend-colours');
  colours.replaceChildren();
  colours.append(el('h3', {}, state.colour === 'community' ? 'Communities' : 'Registrable domains'));
  const ul = el('ul');
  for (const item of state.legend) {
    const dot = el('i');
    if (item.colour) dot.style.background = item.colour;
    const li = el('li', { title: item.text + (item.count ? ' (' + item.count + ')' : '') }, dot, el('span', {}, item.text));
    if (item.count) li.append(el('small', {}, item.count));
    ul.append(li);
  }
  colours.append(ul);
  $('legend-changed').hidden = !state.changeHistory;
  $('changed-count').textContent = fmt(state.changed.size) + ' ' + (state.view === 'domains' ? 'domains' : 'hosts');
  $('legend-size').textContent = 'Node size: ' + (by === 'pagerank' ? 'PageRank' : 'in-weight (links received)') + '.';
}
