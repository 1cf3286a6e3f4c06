// Browser tests of "safe to share": XSS payloads in every stored text field (run
// name, the default name from an uploaded file's name, tags, notes, facts, annotation
// text, report title and description, snapshot title) and every page that shows them
// (the history page too),
// with a dialog handler and a `window.__pwned` canary. No dialog opens, no canary is set,
// no Content-Security-Policy violation happens (the payloads are text, and the app's own
// scripts all run under the policy: hydration and charts still work), and the text shows
// as typed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withAppAndBrowser, watchErrors, ROOT } from './support.mjs';

const env = withAppAndBrowser();
const tmp = mkdtempSync(join(tmpdir(), 'plateau-xss-'));

after(async () => {
  rmSync(tmp, { recursive: true, force: true });
});

// Each sets `window.__pwned` (or opens a dialog) if it ever runs.
const SCRIPT = '<script>window.__pwned = 1; alert(1)</script>';
const TITLE = '</title><img src=x onerror="window.__pwned = 2; alert(2)">';
const TEXTAREA = '</textarea><svg onload="window.__pwned = 3; alert(3)">';
const ATTR = '"><img src=x onerror=window.__pwned=4>\'';
const NAME = `${TITLE}${SCRIPT}`;
const FILE_NAME = '<svg onload=window.__pwned=5>.txt';
const FACT = `${ATTR} ${TEXTAREA}`;
const BODY = `${TEXTAREA} ${SCRIPT} [a](javascript:window.__pwned=6) [b](/\\evil.example) [c](//evil.example) `
  + '<iframe src="javascript:window.__pwned=7"></iframe> **bold**';
const TAGS = '<svg/onload=window.__pwned=8> <img/src=x/onerror=window.__pwned=9>';

const data = (f) => readFileSync(join(ROOT, 'end2end', 'data', f));

/** Imports files through the API; returns the first run created. */
async function importRun(files, fields) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [name, bytes] of files) form.append('file', new Blob([bytes]), name);
  const r = await fetch(`${env.server.base}/api/v1/runs`, { method: 'POST', body: form });
  assert.equal(r.status, 201, await r.clone().text());
  return (await r.json()).runs[0];
}

async function post(path, body) {
  const r = await fetch(env.server.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.ok(r.ok, `${path}: ${r.status} ${await r.clone().text()}`);
  return r.json();
}

/** A page that records dialogs and CSP violations, and fails on neither being empty. */
async function openPage() {
  const page = await env.browser.newPage();
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const errors = watchErrors(page);
  return { page, dialogs, errors };
}

async function assertInert({ page, dialogs }, where) {
  // Give event handlers (onerror, onload) a moment to fire if they were ever markup.
  await page.waitForTimeout(300);
  assert.deepEqual(dialogs, [], `${where}: a dialog opened`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, `${where}: a payload ran`);
  assert.deepEqual(await page.evaluate(() => window.__violations), [], `${where}: CSP violations`);
  const bad = await page.evaluate(() => [...document.querySelectorAll('a[href]')]
    .map((a) => a.getAttribute('href'))
    .filter((h) => /^\s*(javascript:|\/\/|\/\\|\\)/i.test(h)));
  assert.deepEqual(bad, [], `${where}: links off the site`);
  assert.equal(await page.locator('main img, main svg[onload], main iframe').count(), 0, `${where}: injected elements`);
}

let runA; // named by the form field, with facts, tags and notes
let runB; // named after its uploaded file
let runReport;
let compareReport;
let snapshot;
let planSnapshot;
let experimentUrl; // named after its uploaded folder, its runs after their subfolders
const EXPERIMENT = '<img src=x onerror=window.__pwned=10>';

test('payloads are stored in every text field', async () => {
  runA = await importRun([['sweep-c1.txt', data('sweep-c1.txt')], ['sweep-c2.txt', data('sweep-c2.txt')]], {
    name: NAME, model: FACT, engine: `vllm ${SCRIPT}`, engine_version: TITLE, gpu: `8x ${ATTR}`, tags: TAGS, notes: `${TEXTAREA} ${SCRIPT}`,
  });
  runB = await importRun([[FILE_NAME, data('sweep-c4.txt')]], {});
  assert.equal(runA.name, NAME);
  assert.match(runB.name, /<svg onload=window.__pwned=5>/, 'the default name comes from the file name');
  await post(`/api/v1/runs/${runA.id}/annotations`, { anchor: { type: 'run' }, kind: 'note', body: BODY });
  await post(`/api/v1/runs/${runA.id}/annotations`, { anchor: { type: 'point', load_kind: 'concurrency', load: 1 }, kind: 'cause', body: `${TITLE} ${ATTR}` });
  runReport = (await post('/api/v1/reports', { title: NAME, description: FACT, view: `/runs/${runA.id}` })).url;
  compareReport = (await post('/api/v1/reports', { title: TITLE, description: SCRIPT, view: `/compare?runs=${runA.id},${runB.id}` })).url;
  snapshot = `/s/${(await post('/api/v1/snapshots', { title: NAME, view: `/compare?runs=${runA.id},${runB.id}` })).id}`;
  // The roofline's hardware: a model's facts and a GPU named and sourced with payloads.
  const put = async (path, body) => {
    const r = await fetch(env.server.base + path, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 200, await r.clone().text());
  };
  await put('/api/v1/hardware/models', { model: FACT, active_params_b: 8, bits_per_weight: 16, source: SCRIPT });
  await put('/api/v1/hardware/gpus', { name: ATTR, memory_tb_s: 1, source: TITLE, aliases: [SCRIPT] });
  const planView = `/plan?demand=${encodeURIComponent('rate=1')}&slo=${encodeURIComponent('e2e:p99<=1000s')}&runs=${runA.id},${runB.id}`;
  planSnapshot = `/s/${(await post('/api/v1/snapshots', { title: NAME, view: planView })).id}`;
  const form = new FormData();
  for (const k of ['k=1', 'k=2']) form.append('file', new Blob([data('sweep-c1.txt')]), `${EXPERIMENT}/SERVE--${k}<svg onload=window.__pwned=11>/sweep-c1.txt`);
  const r = await fetch(`${env.server.base}/api/v1/runs`, { method: 'POST', body: form });
  assert.equal(r.status, 201, await r.clone().text());
  const experiment = (await r.json()).experiment;
  assert.equal(experiment.name, EXPERIMENT);
  experimentUrl = experiment.url;
});

test('every page shows the payloads as inert text, under a CSP, hydrated with charts', async () => {
  const pages = [
    ['/', '#runs tbody tr'],
    [`/?q=${encodeURIComponent(SCRIPT)}`, 'main'],
    // A named SLO chosen by a crafted address: never echoed unless it is one stored.
    [`/?slo=${encodeURIComponent(SCRIPT)}`, '#runs tbody tr'],
    [`/runs/${runA.id}`, '#chart-throughput canvas'],
    [`/runs/${runB.id}`, '#chart-throughput canvas'],
    // The history page: names, the engine version and annotations in its table and chart.
    [`/runs/${runA.id}/history`, '#chart-history canvas'],
    [`/runs/${runA.id}/history?metric=e2e.p99&level=1`, '#chart-history canvas'],
    // No knee in two levels: the first line names each run without a value.
    [`/runs/${runA.id}/history?level=knee`, '#chart-history canvas'],
    [`/compare?runs=${runA.id},${runB.id}`, '.chart canvas'],
    [runReport, '#chart-throughput canvas'],
    [compareReport, '.chart canvas'],
    [snapshot, '.chart canvas'],
    // Experiments: the list, a search for a payload, and the page named after its folder.
    ['/experiments', '#experiments tbody tr'],
    [`/experiments?q=${encodeURIComponent(SCRIPT)}`, 'main'],
    [experimentUrl, '#exp-throughput canvas'],
    [`${experimentUrl}?slo=${encodeURIComponent('ttft:p99<=2s')}`, '#settings-table'],
    // The plan: the runs' names in its verdict, table and chart; a payload as the demand
    // (refused, its part said) and as the SLO of the form.
    [`/plan?demand=${encodeURIComponent('rate=1')}&slo=${encodeURIComponent('e2e:p99<=1000s')}&runs=${runA.id},${runB.id}`, '#plan-verdict'],
    // (a 400 page: the browser logs its status, nothing else)
    [`/plan?demand=${encodeURIComponent(SCRIPT)}&slo=x&runs=${runA.id}`, 'main'],
    [`/plan?slo=${encodeURIComponent(SCRIPT)}&runs=${runA.id}`, '#plan-form'],
    // A plan's snapshot: its title and the runs' names as frozen.
    [planSnapshot, '#plan-verdict'],
    // The hardware page: the names and sources in its tables, payloads in its address
    // as the forms' values and another site as the way back.
    ['/settings/hardware', '#gpus-table'],
    [`/settings/hardware?model=${encodeURIComponent(SCRIPT)}&gpu=${encodeURIComponent(ATTR)}&back=${encodeURIComponent('//evil.example')}`, '#model-form'],
  ];
  for (const [path, ready] of pages) {
    const p = await openPage();
    const resp = await p.page.goto(env.server.base + path);
    await p.page.locator(ready).first().waitFor();
    await assertInert(p, path);
    const csp = resp.headers()['content-security-policy'] || '';
    assert.match(csp, /script-src 'self' 'nonce-[^']+' 'wasm-unsafe-eval'/, `${path}: CSP`);
    assert.match(csp, /frame-ancestors 'none'/, `${path}: CSP`);
    assert.equal(resp.headers()['x-content-type-options'], 'nosniff', path);
    assert.ok(resp.headers()['referrer-policy'], path);
    assert.deepEqual(p.errors.filter((e) => !/favicon|status of 40[04]/.test(e)), [], `${path}: console errors`);
    await p.page.close();
  }
});

test('the run page shows each payload as typed and its forms keep them as values', async () => {
  const p = await openPage();
  await p.page.goto(`${env.server.base}/runs/${runA.id}`);
  await p.page.locator('#chart-throughput canvas').waitFor();
  assert.equal(await p.page.title(), `${NAME} · Plateau`, 'the document title is the name as text');
  assert.equal(await p.page.locator('#run-name').innerText(), NAME);
  const text = await p.page.locator('main').innerText();
  for (const s of [SCRIPT, TITLE, TEXTAREA.trim(), '<svg/onload=window.__pwned=8>']) {
    assert.ok(text.includes(s), `the page shows ${s} as text`);
  }
  // The annotation text shows literally; its formatting still works; its links stay on
  // http(s) or this site.
  const note = p.page.locator('li.annotation .annotation-text', { hasText: 'evil.example' }).first();
  assert.match(await note.innerText(), /<\/textarea><svg onload=/);
  assert.equal(await note.locator('strong').innerText(), 'bold');
  assert.equal(await note.locator('a').count(), 0, 'no javascript:, /\\host or //host link');
  // The edit form's textarea holds the body as its value (</textarea> did not end it).
  const edit = p.page.locator('textarea[name="body"]').filter({ hasText: 'evil.example' }).first();
  if (await edit.count()) assert.equal(await edit.inputValue(), BODY);
  // Hydrated: the chart responds to the app (a client-side navigation keeps working).
  await p.page.locator('header.topbar nav a[href="/"]').click();
  await p.page.locator('#runs tbody tr').first().waitFor();
  await assertInert(p, 'after navigation');
  // Defence in depth: markup that did reach the DOM still could not run script.
  await p.page.evaluate(() => {
    document.body.insertAdjacentHTML('beforeend', '<img src="data:," onerror="window.__pwned = 10"><a id="js-link" href="javascript:window.__pwned = 11">x</a>');
    const s = document.createElement('script');
    s.textContent = 'window.__pwned = 12';
    document.body.append(s);
  });
  await p.page.locator('#js-link').click();
  await p.page.waitForFunction(() => window.__violations.length >= 2);
  assert.equal(await p.page.evaluate(() => window.__pwned), undefined, 'the CSP blocked injected inline script');
  assert.ok((await p.page.evaluate(() => window.__violations)).every((v) => v.startsWith('script-src')), 'blocked by script-src');
  await p.page.close();
});

test('the import preview shows file names and fields as text', async () => {
  const form = new FormData();
  form.append('name', NAME);
  form.append('notes', TEXTAREA);
  form.append('file', new Blob([data('sweep-c1.txt')]), FILE_NAME);
  const r = await fetch(`${env.server.base}/imports`, { method: 'POST', body: form, redirect: 'manual' });
  const location = r.headers.get('location');
  assert.match(location || '', /^\/imports\/[a-z0-9]+$/);
  const p = await openPage();
  await p.page.goto(env.server.base + location);
  await p.page.locator('#preview-files').waitFor();
  assert.equal(await p.page.locator('input[name=name]').inputValue(), NAME);
  assert.equal(await p.page.locator('textarea[name=notes]').inputValue(), TEXTAREA);
  assert.match(await p.page.locator('#preview-files').innerText(), /<svg onload=window.__pwned=5>\.txt/);
  await assertInert(p, 'import preview');
  await p.page.close();
});

test('exports stay inert: the offline reports from file://, Markdown and CSV as text', async () => {
  for (const path of [`/runs/${runA.id}/report.html`, `/compare/report.html?runs=${runA.id},${runB.id}`]) {
    const r = await fetch(env.server.base + path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-disposition'), /^attachment/, path);
    assert.match(r.headers.get('content-security-policy'), /script-src 'sha256-[^']+' 'sha256-[^']+';/, path);
    const file = join(tmp, `report-${path.length}.html`);
    writeFileSync(file, await r.text());
    const p = await openPage();
    await p.page.goto(pathToFileURL(file).href);
    // The charts draw from file:// under the report's own <meta> policy.
    await p.page.locator('.chart canvas').first().waitFor();
    await assertInert(p, `${path} from file://`);
    const text = await p.page.locator('main').innerText();
    assert.ok(text.includes(TITLE), `${path}: the name as text`);
    await p.page.close();
  }
  for (const path of [`/api/v1/runs/${runA.id}/export.md`, `/compare/export.md?runs=${runA.id},${runB.id}`,
    `/api/v1/runs/${runA.id}/export.csv`, `/compare/export.csv?runs=${runA.id},${runB.id}`]) {
    const r = await fetch(env.server.base + path);
    assert.equal(r.status, 200, path);
    assert.doesNotMatch(r.headers.get('content-type'), /html/, path);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    const body = await r.text();
    if (path.includes('.md')) {
      // Markup characters only backslash-escaped: shown as typed.
      assert.doesNotMatch(body, /(^|[^\\])(<(script|img|svg|iframe)|\]\(|!\[)/, `${path}: raw markup`);
    } else {
      assert.ok(!/(^|[,\n])"?[=+@]/.test(body.split('\n').filter((l) => !l.startsWith('#')).join('\n')), `${path}: a formula cell`);
    }
  }
});

test('the experiment page and the runs list show the folder names as typed', async () => {
  const p = await openPage();
  await p.page.goto(env.server.base + experimentUrl);
  await p.page.locator('#exp-throughput canvas').waitFor();
  assert.equal(await p.page.locator('#experiment-name').innerText(), EXPERIMENT);
  assert.equal(await p.page.title(), `${EXPERIMENT} · Plateau`);
  assert.ok((await p.page.locator('#settings-table').innerText()).includes('<svg onload=window.__pwned=11>'), 'the setting as text');
  await p.page.goto(`${env.server.base}/`);
  assert.equal(await p.page.locator('#runs tr.group a.experiment-link').first().innerText(), `Experiment: ${EXPERIMENT}`);
  await assertInert(p, 'experiment');
  await p.page.close();
});
