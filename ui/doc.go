// Package ui is weaver's map page: one HTML page that draws a store's host
// graph with sigma.js (WebGL), or on a 2D canvas in a browser without
// WebGL, and lays it out with ForceAtlas2 in a web worker.
//
// The page's script is written in JavaScript under src/ and bundled by
// esbuild, with sigma.js, graphology, ForceAtlas2 and Louvain, into
// dist/map.js; dist/map.html is the page around it. Both files are
// committed and embedded here with go:embed, so building weaver needs no
// node: `make ui` rebuilds them from package-lock.json (npm ci, then
// build.mjs) after a change to src/.
//
// WritePage puts the script, a small config and, for a page that must work
// from a file, the graph itself (weaver's node-link JSON) inline into the
// page, so it opens with no server and no network. A live page (weaver
// crawl --listen, weaver serve) carries no graph: its config names a URL
// that it polls for what changed since its last answer (see serve).
//
// The page shows what it draws in <div id="stats" data-nodes="N"
// data-edges="M">, for scripts and tests; window.weaverMap exposes the
// graph, the renderer and the layout to them.
//
// ui imports nothing of weaver's: export and serve use it.
package ui
