// The map without WebGL: the same map as sigma's, drawn on a 2D canvas.

import { state, LOD_NODES } from './state.js';
import { CHANGED_RING, DIMMED, straightColour } from './colours.js';
import { layoutLabels, drawLabels, drawRings, EVERY_LABEL } from './labels.js';

// Camera2D is where Canvas2DMap looks: x and y in framed coordinates (the
// graph fitted into [0, 1]², as sigma's camera), ratio > 1 zoomed out.
export class Camera2D {
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
export class Canvas2DMap {
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
  // pixels wide (highlighted nodes always, every node of a graph of at
  // most EVERY_LABEL), laid out by layoutLabels, and rings the hosts
  // changed recently.
  drawLabels(nodes) {
    const ctx = this.ctx;
    const min = (this.settings.labelRenderedSizeThreshold || 9) * 0.8;
    const rings = nodes.filter((n) => state.changed.has(n.key) && n.color !== DIMMED &&
      n.x > -n.r - 20 && n.y > -n.r - 20 && n.x < this.width + n.r + 20 && n.y < this.height + n.r + 20);
    drawRings(ctx, rings, CHANGED_RING);
    this.ringsDrawn = rings.length;
    const every = nodes.length <= EVERY_LABEL; // a small graph names every host that fits
    const candidates = nodes.filter((n) => n.label && (n.highlighted || every || n.r >= min) &&
      n.x >= -n.r && n.y >= -n.r && n.x <= this.width + n.r && n.y <= this.height + n.r)
      .map((n) => ({ key: n.key, x: n.x, y: n.y, r: n.r, label: n.label, highlighted: n.highlighted }));
    const placed = layoutLabels(ctx, candidates, this.width, this.height);
    for (const p of placed) {
      if (!p.highlighted) continue;
      ctx.fillStyle = '#fff';
      ctx.fillRect(p.box[0], p.box[1], p.box[2] - p.box[0], p.box[3] - p.box[1]);
    }
    drawLabels(ctx, placed);
    this.labelBoxes = placed.map((p) => ({ key: p.key, box: p.box }));
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

