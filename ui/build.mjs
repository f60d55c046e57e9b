// Builds dist/map.js (the page's script, src/map.js and the modules it
// imports, with sigma.js, graphology, ForceAtlas2 and Louvain, minified
// into one file) and dist/map.html (the page, with
// the places where weaver puts the script, the config and the graph).
// Both are committed and embedded into the weaver binary (ui.go), so
// building weaver needs no node. Run through `make ui`.
import { build } from 'esbuild';
import { copyFileSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';

// The banner names what the bundle holds, with versions and licences,
// from package-lock.json.
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pkgs = Object.entries(lock.packages)
  .filter(([path]) => path.startsWith('node_modules/') && !path.includes('esbuild'))
  .map(([path, p]) => path.slice('node_modules/'.length) + ' ' + p.version + ' (' + (p.license || '?') + ')')
  .sort();
// The sources' hash lets a Go test (ui_test.go) tell a stale bundle
// without node.
// Every file of src/ counts, by name and content, in the order of their
// names (as ui_test.go reads them).
const hash = createHash('sha256');
const sources = readdirSync('src').sort().map((f) => 'src/' + f);
for (const f of [...sources, 'package-lock.json', 'build.mjs']) {
  hash.update(f + '\n');
  hash.update(readFileSync(f));
}
const banner = '/* weaver map page, built from ui/src by `make ui`. Sources sha256 ' + hash.digest('hex') +
  '. Bundles: ' + pkgs.join(', ') + ' */';

await build({
  entryPoints: ['src/map.js'],
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020'],
  legalComments: 'eof',
  banner: { js: banner },
  charset: 'utf8',
  outfile: 'dist/map.js',
  logLevel: 'warning',
});
copyFileSync('src/map.html', 'dist/map.html');

// The script is inlined into a <script> element: it must not end it.
const js = readFileSync('dist/map.js', 'utf8');
if (/<\/script/i.test(js)) {
  console.error('dist/map.js contains "</script": it cannot be inlined');
  process.exit(1);
}
console.log('dist/map.js: ' + statSync('dist/map.js').size + ' bytes');
