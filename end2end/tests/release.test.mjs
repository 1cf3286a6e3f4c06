// The release build as a browser sees it on a first visit: what a run page transfers
// (HTML + wasm + JS + CSS, ECharts counted apart), compressed with brotli, every asset under
// a content-hashed name kept for a year, the page itself never stored. Prints the figures
// docs/deploying.md quotes. Runs against the binary and site of `.ci/test` (release).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors } from './support.mjs';

const env = withAppAndBrowser();

test('a first visit to a run page transfers a small, compressed, cacheable bundle', async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  const errors = watchErrors(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const byId = new Map();
  cdp.on('Network.responseReceived', (e) => byId.set(e.requestId, { url: e.response.url, headers: e.response.headers, type: e.type }));
  cdp.on('Network.loadingFinished', (e) => { const r = byId.get(e.requestId); if (r) r.bytes = e.encodedDataLength; });

  await page.goto(`${env.server.base}/`);
  const href = await page.locator('table a[href^="/runs/"]').first().getAttribute('href');
  byId.clear();
  await page.goto(`${env.server.base}${href}`, { waitUntil: 'networkidle' });
  await page.waitForFunction(() => document.querySelector('[data-chart-ready="true"], canvas'));

  const rows = [...byId.values()].filter((r) => r.bytes !== undefined && new URL(r.url).origin === env.server.base);
  const header = (r, name) => Object.entries(r.headers).find(([k]) => k.toLowerCase() === name)?.[1];
  const kind = (r) => {
    const p = new URL(r.url).pathname;
    if (p.endsWith('.echarts.js')) return 'echarts';
    if (p.endsWith('.wasm')) return 'wasm';
    if (p.endsWith('.js')) return 'js';
    if (p.endsWith('.css')) return 'css';
    if (r.type === 'Document') return 'html';
    return 'other';
  };
  const sums = {};
  for (const r of rows) sums[kind(r)] = (sums[kind(r)] || 0) + r.bytes;
  const own = (sums.html || 0) + (sums.wasm || 0) + (sums.js || 0) + (sums.css || 0);
  const kb = (n) => `${((n || 0) / 1024).toFixed(1)} KB`;
  console.log('first visit to a run page, bytes over the wire (Chromium, brotli):');
  for (const k of ['html', 'wasm', 'js', 'css', 'echarts']) console.log(`  ${k.padEnd(8)} ${kb(sums[k]).padStart(10)}`);
  console.log(`  ${'total'.padEnd(8)} ${kb(own).padStart(10)} (ECharts aside)`);

  // wasm-bindgen's snippets (tiny inline JS of the crates) keep fixed names: revalidated.
  for (const r of rows.filter((r) => new URL(r.url).pathname.startsWith('/pkg/snippets/'))) {
    assert.equal(header(r, 'cache-control'), 'no-cache', r.url);
  }
  for (const r of rows.filter((r) => /^\/pkg\/[^/]+$/.test(new URL(r.url).pathname))) {
    assert.match(new URL(r.url).pathname, /^\/pkg\/plateau-[0-9a-f]{12}[._]/, `${r.url} has no content hash`);
    assert.equal(header(r, 'cache-control'), 'public, max-age=31536000, immutable', r.url);
    assert.equal(header(r, 'content-encoding'), 'br', r.url);
  }
  const doc = rows.find((r) => kind(r) === 'html');
  assert.equal(header(doc, 'cache-control'), 'no-store');
  assert.ok(sums.wasm > 0, 'the wasm bundle was loaded');
  // The release bundle's budget is 600 KB gzip (checked at build time); brotli is smaller.
  assert.ok(own < 600 * 1024, `first visit transferred ${kb(own)} (ECharts aside)`);
  assert.deepEqual(errors, []);
  await context.close();
});
