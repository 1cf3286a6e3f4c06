// Finishes a built site folder (called by .ci/build): gives the browser assets
// content-hashed names, precompresses them, prints their sizes, and checks the bundle budget.
//
//   node .ci/assets.mjs SITE_DIR [--budget-gzip-kb N]
//
// In:  SITE/pkg/plateau.js, plateau_bg.wasm, plateau.css (wasm-bindgen's output and the
//      stylesheet), SITE/echarts.min.js, SITE/plateau.js and SITE/charts.js (from public/).
// Out: SITE/pkg/<id>.js, <id>_bg.wasm, <id>.css, <id>.echarts.js, <id>.ui.js, <id>.charts.js, where <id> is
//      `plateau-` + 12 hex digits of the SHA-256 of all of them; SITE/pkg/build-id holds <id>
//      (the server reads it at start-up and names the files in every page); a `.gz` and a
//      `.br` beside every file of SITE/pkg (served when the browser accepts them). Hashed names
//      let the server mark them immutable for a year; a new build gets new names.
// The unhashed originals stay where they were, for the offline report and old links.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, copyFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const site = process.argv[2];
if (!site) {
  console.error('usage: node .ci/assets.mjs SITE_DIR [--budget-gzip-kb N]');
  process.exit(2);
}
const budgetAt = process.argv.indexOf('--budget-gzip-kb');
const budgetKb = budgetAt > 0 ? Number(process.argv[budgetAt + 1]) : null;

const pkg = join(site, 'pkg');
const inputs = [
  [join(pkg, 'plateau.js'), '.js'],
  [join(pkg, 'plateau_bg.wasm'), '_bg.wasm'],
  [join(pkg, 'plateau.css'), '.css'],
  [join(site, 'echarts.min.js'), '.echarts.js'],
  [join(site, 'plateau.js'), '.ui.js'],
  [join(site, 'charts.js'), '.charts.js'],
];
const hash = createHash('sha256');
for (const [file] of inputs) hash.update(readFileSync(file));
const id = `plateau-${hash.digest('hex').slice(0, 12)}`;
for (const [file, suffix] of inputs) {
  copyFileSync(file, join(pkg, `${id}${suffix}`));
  // Unhashed names too, for a server started without pkg/build-id.
  if (!file.startsWith(pkg)) copyFileSync(file, join(pkg, `plateau${suffix}`));
}
writeFileSync(join(pkg, 'build-id'), `${id}\n`);

const rows = [];
for (const name of readdirSync(pkg).sort()) {
  if (name.endsWith('.gz') || name.endsWith('.br') || name === 'build-id') continue;
  const path = join(pkg, name);
  if (!statSync(path).isFile()) continue;
  const raw = readFileSync(path);
  const gz = gzipSync(raw, { level: 9 });
  const br = brotliCompressSync(raw, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
  });
  writeFileSync(`${path}.gz`, gz);
  writeFileSync(`${path}.br`, br);
  if (name.startsWith(id)) rows.push([name, raw.length, gz.length, br.length]);
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(`[assets] build ${id}`);
console.log('[assets] file                                   raw        gzip       brotli');
for (const [name, raw, gz, br] of rows) {
  console.log(`[assets] ${name.padEnd(38)} ${kb(raw).padStart(10)} ${kb(gz).padStart(10)} ${kb(br).padStart(10)}`);
}
// The budget counts what Plateau itself ships (wasm + its JS glue + CSS + plateau.js),
// ECharts aside.
const own = rows.filter(([name]) => !name.endsWith('.echarts.js'));
const ownGz = own.reduce((s, [, , gz]) => s + gz, 0);
const wasm = rows.find(([name]) => name.endsWith('_bg.wasm'));
console.log(`[assets] Plateau's own bundle (ECharts aside): ${kb(ownGz)} gzip; wasm ${kb(wasm[1])} raw, ${kb(wasm[2])} gzip`);
if (budgetKb !== null) {
  if (ownGz > budgetKb * 1024) {
    console.error(`[assets] over budget: ${kb(ownGz)} gzip > ${budgetKb} KB`);
    process.exit(1);
  }
  console.log(`[assets] within the budget of ${budgetKb} KB gzip`);
}
