// Labels without overlap: both renderers lay their labels out here, the
// largest node first, and leave out any label whose box would intersect
// one already placed. The boxes placed are kept on the renderer
// (labelBoxes) for tests and scripts (weaverMap.labelBoxes()).

export const LABEL_SIZE = 14; // px, sigma's labelSize
export const LABEL_FONT = 'Arial, sans-serif';
export const LABEL_COLOUR = '#000';
// MAX_LABELS bounds the labels of a frame (a zoomed-out big graph has
// thousands of candidates, and measuring them costs).
const MAX_LABELS = 400;
// EVERY_LABEL is the most hosts a graph may have for each of them to be
// a label candidate whatever its drawn size: a small crawl (a live map's
// first minutes) labels every host that fits, not only the few drawn
// big; a bigger graph labels those drawn big enough, largest first.
export const EVERY_LABEL = 2000;
// GAP is the least room between two labels, in px.
const GAP = 2;
const CELL = 64; // the grid's cell, in px

const widths = new Map(); // label → its width in px, at LABEL_SIZE

function measure(ctx, label) {
  let w = widths.get(label);
  if (w === undefined) {
    if (widths.size > 50000) widths.clear();
    w = ctx.measureText(label).width;
    widths.set(label, w);
  }
  return w;
}

// labelBox is the box of the label of a node of radius r at (x, y), as
// drawLabel draws it: the text starts r + 3 px right of the centre, its
// baseline a third of the font's size below it.
export function labelBox(x, y, r, width) {
  const base = y + LABEL_SIZE / 3;
  return [x + r + 2, base - LABEL_SIZE, x + r + 4 + width, base + 0.3 * LABEL_SIZE];
}

// layoutLabels places the labels of candidates ({key, x, y, r, label,
// highlighted}: viewport px, r the node's drawn radius) on a viewport of
// width × height: highlighted nodes first, then the largest first, each
// label kept only when its box, grown by GAP, meets no box placed before.
// It returns the placed candidates, each with its box [x0, y0, x1, y1].
export function layoutLabels(ctx, candidates, width, height) {
  ctx.font = 'normal ' + LABEL_SIZE + 'px ' + LABEL_FONT;
  candidates.sort((p, q) => (q.highlighted ? 1 : 0) - (p.highlighted ? 1 : 0) || q.r - p.r ||
    (p.key < q.key ? -1 : p.key > q.key ? 1 : 0));
  const grid = new Map(); // cell → the boxes that reach into it
  const cells = (b, fn) => {
    const x0 = Math.floor(b[0] / CELL), x1 = Math.floor(b[2] / CELL);
    const y0 = Math.floor(b[1] / CELL), y1 = Math.floor(b[3] / CELL);
    for (let x = x0; x <= x1; x++) {
      for (let y = y0; y <= y1; y++) {
        if (fn(x + ',' + y) === false) return false;
      }
    }
    return true;
  };
  const placed = [];
  for (const c of candidates) {
    if (placed.length >= MAX_LABELS && !c.highlighted) break;
    const box = labelBox(c.x, c.y, c.r, measure(ctx, c.label));
    // Whole labels only: one the viewport's edge would cut is left out.
    if (box[0] < 0 || box[1] < 0 || box[2] > width || box[3] > height) continue;
    const grown = [box[0] - GAP, box[1] - GAP, box[2] + GAP, box[3] + GAP];
    const free = cells(grown, (k) => {
      for (const b of grid.get(k) || []) {
        if (grown[0] < b[2] && b[0] < grown[2] && grown[1] < b[3] && b[1] < grown[3]) return false;
      }
      return true;
    });
    if (!free && !c.highlighted) continue;
    cells(box, (k) => {
      let list = grid.get(k);
      if (!list) grid.set(k, (list = []));
      list.push(box);
    });
    placed.push({ ...c, box });
  }
  return placed;
}

// drawLabels draws the placed labels on a 2D context (sigma's labels
// layer, or the canvas renderer's).
export function drawLabels(ctx, placed) {
  ctx.font = 'normal ' + LABEL_SIZE + 'px ' + LABEL_FONT;
  ctx.fillStyle = LABEL_COLOUR;
  ctx.textBaseline = 'alphabetic';
  for (const p of placed) ctx.fillText(p.label, p.x + p.r + 3, p.y + LABEL_SIZE / 3);
}

// drawRings rings the nodes ({x, y, r}) changed recently: a white gap
// around the disc, then a dark ring, whatever the disc's colour.
export function drawRings(ctx, nodes, colour) {
  if (!nodes.length) return;
  ctx.save();
  ctx.beginPath();
  for (const n of nodes) {
    ctx.moveTo(n.x + n.r + 1.5, n.y);
    ctx.arc(n.x, n.y, n.r + 1.5, 0, 2 * Math.PI);
  }
  ctx.lineWidth = 2;
  ctx.strokeStyle = 'rgba(255,255,255,0.9)';
  ctx.stroke();
  ctx.beginPath();
  for (const n of nodes) {
    ctx.moveTo(n.x + n.r + 3.5, n.y);
    ctx.arc(n.x, n.y, n.r + 3.5, 0, 2 * Math.PI);
  }
  ctx.lineWidth = 2.5;
  ctx.strokeStyle = colour;
  ctx.stroke();
  ctx.restore();
}
