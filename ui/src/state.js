// The page's state, shared by its modules.

import Graph from 'graphology';
import { config } from './dom.js';

// Above these sizes the page trades detail for frame rate. Measured in
// headless chromium on software WebGL (SwiftShader), 20,000 hosts: sigma's
// circle program (a quad per node) drew ~1 frame/s, its point program (one
// vertex per node, the same anti-aliased disc) ~20; 196,000 edges take
// seconds a frame, so they are left out while the camera moves.
export const ARROWS_MAX_EDGES = 5000; // arrow heads cost a second program
export const POINT_NODES_ABOVE = 2000; // nodes drawn as point sprites
export const HIDE_EDGES_ON_MOVE_ABOVE = 20000; // edges not drawn while panning and zooming
// While the camera moves over such a graph (its edges hidden), the page
// draws only the LOD_NODES biggest hosts (by PageRank, or in-weight until
// ranks are known), and skips sigma's picking pass (what the mouse points
// at is not asked mid-move): on software WebGL, 20,000 point sprites and
// the picking pass cost more than the rest of a frame. The whole graph is
// drawn again in the frame after the camera stops.
export const LOD_NODES = 5000;

export const state = {
  hosts: newGraph(), // every host: the data
  domains: null, // hosts collapsed by registrable domain, built when shown
  view: 'hosts',
  colour: 'domain', // or 'community': the default above PALETTE.length domains
  colourChosen: false, // the user chose the colouring: no default any more
  minWeight: 1,
  ranked: false, // most nodes carry PageRank: size by it (see restyle)
  // stored: every host came with a position (x, y) from the store's
  // layout: the page draws it as it is and runs no layout of its own
  // unless asked; storedCommunities: every host came with a community.
  stored: false,
  storedCommunities: false,
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
  louvain: null, // the last Louvain communities found, and of what graph (data.js louvainOf)
  legend: [],
  // changedWithin is how recent a host's last change must be, in ms
  // before the newest crawl the page knows of (newest), for a ring.
  changedWithin: 24 * 3600e3,
  newest: 0,
  changed: new Set(), // the hosts marked as changed
  changeHistory: false, // some host changed once: the legend says what rings mean
  drawnEdges: 0,
  nodeType: null, // 'point' for big graphs, else sigma's circles
  lod: false, // a big graph: fewer nodes while the camera moves (LOD_NODES)
  timings: {}, // ms of the last update's steps, for the benchmarks
  noWebGL: '', // why the browser cannot draw the map, when it cannot
  edgeColour: '', // the links' colour for sigma (premultiplied), set by updateStats
};

export function newGraph() {
  return new Graph({ type: 'directed', multi: false, allowSelfLoops: true });
}

export function shown() {
  return state.view === 'domains' ? state.domains : state.hosts;
}
