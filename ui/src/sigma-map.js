// The map on WebGL: sigma.js with a level of detail for camera moves over
// big graphs, labels laid out without overlap, and rings around the hosts
// changed recently.

import Sigma from 'sigma';
import { NodePointProgram } from 'sigma/rendering';
import { state, LOD_NODES } from './state.js';
import { CHANGED_RING, DIMMED } from './colours.js';
import { layoutLabels, drawLabels, drawRings, EVERY_LABEL } from './labels.js';

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
export class MapSigma extends Sigma {
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

  // process is sigma's (the graph indexed again: positions, sizes); the
  // nodes' order by size, which renderLabels walks, is then taken again.
  process() {
    this.sizeOrder = null;
    return super.process();
  }

  // renderLabels replaces sigma's (a grid that keeps the biggest label of
  // each cell, whose labels still overlap across cells) with
  // layoutLabels: largest first, none over another. It walks the nodes
  // from the biggest down to the smallest drawn big enough for a label
  // (labelRenderedSizeThreshold px), so a frame costs what it labels, not
  // the graph's size; a graph of at most EVERY_LABEL hosts offers them
  // all, so that every host that fits is named. It rings the hosts changed recently on the same
  // layer, below the labels.
  renderLabels() {
    const ctx = this.canvasContexts.labels;
    const cache = this.nodeDataCache;
    if (!this.sizeOrder) {
      this.sizeOrder = Object.keys(cache).sort((a, b) => cache[b].size - cache[a].size);
    }
    const k = this.scaleSize(1); // sizes scale linearly with the camera
    const minSize = this.getSetting('labelRenderedSizeThreshold') / k;
    const margin = 20;
    const at = (key, d) => {
      const program = this.nodePrograms[d.type];
      if (program && program.lodLeavesOut && program.lodLeavesOut(key)) return null;
      const r = d.size * k;
      const p = this.framedGraphToViewport(d);
      if (p.x < -margin - r || p.y < -margin - r || p.x > this.width + margin + r || p.y > this.height + margin + r) return null;
      return { key, x: p.x, y: p.y, r, label: d.label, highlighted: !!d.highlighted };
    };
    const rings = [];
    for (const key of state.changed) {
      const d = cache[key];
      if (!d || d.hidden || d.color === DIMMED) continue;
      const c = at(key, d);
      if (c) rings.push(c);
    }
    drawRings(ctx, rings, CHANGED_RING);
    this.ringsDrawn = rings.length;
    if (!this.getSetting('renderLabels')) {
      this.labelBoxes = [];
      return this;
    }
    const candidates = [];
    const seen = new Set();
    const consider = (key) => {
      const d = cache[key];
      if (!d || d.hidden || !d.label || seen.has(key)) return;
      seen.add(key);
      const c = at(key, d);
      if (c) candidates.push(c);
    };
    for (const key of this.highlightedNodes) consider(key);
    for (const key of this.sizeOrder) {
      const d = cache[key];
      if (!d) continue;
      if (d.size < minSize && this.sizeOrder.length > EVERY_LABEL) break;
      consider(key);
    }
    const placed = layoutLabels(ctx, candidates, this.width, this.height);
    drawLabels(ctx, placed);
    this.labelBoxes = placed.map((p) => ({ key: p.key, box: p.box }));
    this.displayedNodeLabels = new Set(placed.map((p) => p.key));
    return this;
  }
}

// LodPointProgram is sigma's point program, which in a moving frame of a
// MapSigma with lod draws only the last LOD_NODES nodes of its buffer
// (and MapSigma.renderLabels only their labels), and skips the picking
// pass.
export class LodPointProgram extends NodePointProgram {
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
