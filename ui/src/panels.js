// The panels around the map: a host's details, and what to do without
// WebGL.

import { $, el, fmt, config } from './dom.js';
import { state, shown } from './state.js';

// webGLMissing says why this browser cannot draw with WebGL (sigma.js
// needs it), or '' when it can. Remote desktops, virtual machines and
// chromium --disable-3d-apis have none.
export function webGLMissing() {
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
export function showNoWebGL() {
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


// showInfo shows the details of key (null: none); a click on a linked
// host calls focus with it.
export function showInfo(key, focus) {
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
  if (a.changes) {
    const when = a.lastChange ? new Date(a.lastChange).toISOString().replace('.000Z', 'Z') : '';
    rows.push(['changes', fmt(a.changes) + (when ? ', last ' + when : '') + (state.changed.has(key) ? ' (recent)' : '')]);
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

