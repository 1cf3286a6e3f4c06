// Browser tests of sharing: annotate a point of the story's chat run and see it on the
// chart, save a report and open it in a fresh browser context, keep a snapshot frozen
// across an edit, keep markup inert, download PNGs, open the offline HTML report from a
// file:// URL, and carry the compare view (hidden runs) in the address.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withAppAndBrowser, watchErrors } from './support.mjs';

const env = withAppAndBrowser();
const tmp = mkdtempSync(join(tmpdir(), 'plateau-share-'));

after(async () => {
  rmSync(tmp, { recursive: true, force: true });
});

const CHAT = 'Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96';
const EVIL = 'C=32 dropped: **chat endpoint** <script>window.__pwned = 1</script></textarea><img src=x onerror="window.__pwned = 2">';

/** Names and data of the annotation series (✎ …) on chart `id`. */
function markers(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id);
    const chart = el && window.echarts && window.echarts.getInstanceByDom(el);
    if (!chart) return null;
    return chart.getOption().series.filter((s) => (s.name || '').startsWith('✎')).map((s) => ({ name: s.name, data: s.data }));
  }, id);
}

async function runIds() {
  const runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  const chat = runs.find((r) => r.name === CHAT).id;
  const other = runs.find((r) => r.name !== CHAT).id;
  return { chat, other };
}

test('annotate C=32, see the pin, save a report, open it elsewhere; snapshots stay frozen; markup stays inert', async () => {
  const { chat } = await runIds();
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/runs/${chat}`);
  await page.locator('#chart-throughput canvas').waitFor();

  // Annotate the C=32 point.
  await page.locator('#annotate summary').click();
  const form = page.locator('#annotate-form');
  await form.locator('input[name="anchor"][value="point"]').check();
  await form.locator('select[name="level"]').selectOption('32');
  await form.locator('select[name="kind"]').selectOption('cause');
  await form.locator('textarea[name="body"]').fill(EVIL);
  await form.locator('button[type="submit"]').click();
  await page.waitForURL(/#annotation-\d+$/);
  await page.locator('#chart-throughput canvas').waitFor();

  // The annotation is listed, its markup shown as text, its formatting applied.
  const item = page.locator('li.annotation').first();
  await item.waitFor();
  assert.match(await item.locator('.annotation-text').innerText(), /<script>window.__pwned = 1<\/script><\/textarea><img src=x/);
  assert.equal(await item.locator('.annotation-text strong').innerText(), 'chat endpoint');
  assert.equal(await page.locator('li.annotation img').count(), 0, 'no <img> was created');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no script ran');
  // Marker on the chart at (32, 464.4), its name escaped for the HTML tooltip.
  await page.waitForFunction(() => {
    const c = window.echarts.getInstanceByDom(document.getElementById('chart-throughput'));
    return c && c.getOption().series.some((s) => (s.name || '').startsWith('✎'));
  });
  const pins = await markers(page, 'chart-throughput');
  assert.equal(pins.length, 1);
  assert.deepEqual(pins[0].data, [[32, 464.4]]);
  assert.ok(pins[0].name.includes('&lt;script&gt;') && !pins[0].name.includes('<script'), pins[0].name);
  // Hovering the pin shows the tooltip with the text, inert.
  const box = await page.locator('#chart-throughput').boundingBox();
  for (let x = 0.05; x < 0.4; x += 0.02) await page.mouse.move(box.x + box.width * x, box.y + box.height * 0.6);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // The levels table marks the row.
  assert.equal(await page.locator('#levels tbody tr.annotated').count(), 1);

  // Save a report of this view.
  await page.locator('#report-form input[name="title"]').fill('Why C=32 dropped');
  await page.locator('#report-form textarea[name="description"]').fill('The chat run used /v1/chat/completions.');
  await page.locator('#report-form button[type="submit"]').click();
  await page.waitForURL(/\/r\/[a-z0-9]{8}$/);
  const reportUrl = page.url();

  // A fresh browser context (no cookies, no cache) sees the same view and annotation.
  const other = await env.browser.newContext();
  const fresh = await other.newPage();
  const freshErrors = watchErrors(fresh);
  await fresh.goto(reportUrl);
  await fresh.locator('#report-banner').waitFor();
  assert.equal(await fresh.locator('.report-title').innerText(), 'Why C=32 dropped');
  assert.equal(await fresh.locator('#run-name').innerText(), CHAT);
  assert.match(await fresh.locator('li.annotation .annotation-text').first().innerText(), /C=32 dropped/);
  await fresh.locator('#chart-throughput canvas').waitFor();
  await fresh.waitForFunction(() => {
    const c = window.echarts.getInstanceByDom(document.getElementById('chart-throughput'));
    return c && c.getOption().series.some((s) => (s.name || '').startsWith('✎'));
  });
  assert.deepEqual((await markers(fresh, 'chart-throughput'))[0].data, [[32, 464.4]]);
  assert.equal(await fresh.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(freshErrors, []);
  await other.close();

  // Snapshot, then edit the annotation: the snapshot keeps the first text.
  await page.goto(`${env.server.base}/runs/${chat}`);
  await page.locator('#snapshot-form input[name="title"]').fill('before the edit');
  await page.locator('#snapshot-form button[type="submit"]').click();
  await page.waitForURL(/\/s\/[0-9a-f]{20}$/);
  const snapshotUrl = page.url();
  await page.locator('#snapshot-banner').waitFor();
  assert.equal(await page.locator('#annotate-form').count(), 0, 'snapshots are read-only');
  await page.goto(`${env.server.base}/runs/${chat}`);
  await page.locator('li.annotation details.edit-annotation summary').first().click();
  const edit = page.locator('li.annotation form.edit-form').first();
  assert.equal(await edit.locator('textarea').inputValue(), EVIL, 'the edit box holds the exact text');
  await edit.locator('textarea').fill('C=32 dropped: the chat endpoint adds a chat template (edited)');
  await edit.locator('button[type="submit"]').click();
  await page.waitForURL(/#annotation-\d+$/);
  await page.locator('li.annotation details.history').first().waitFor();
  assert.match(await page.locator('li.annotation .annotation-text').first().innerText(), /\(edited\)/);
  await page.goto(snapshotUrl);
  await page.locator('#snapshot-banner').waitFor();
  const frozen = await page.locator('li.annotation .annotation-text').first().innerText();
  assert.match(frozen, /<script>window.__pwned = 1<\/script>/, 'the snapshot keeps the text it froze');
  assert.doesNotMatch(frozen, /edited/);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the offline HTML report opens from a file:// URL with its charts and annotations', async () => {
  const { chat } = await runIds();
  const html = await (await fetch(`${env.server.base}/runs/${chat}/report.html`)).text();
  const file = join(tmp, 'report.html');
  writeFileSync(file, html);
  const context = await env.browser.newContext();
  const page = await context.newPage();
  const errors = watchErrors(page);
  // Offline: any request to a network address fails the test.
  const requests = [];
  await context.route(/^https?:/, (route) => { requests.push(route.request().url()); route.abort(); });
  await page.goto(pathToFileURL(file).href);
  await page.locator('#chart-throughput canvas').waitFor();
  const series = await page.evaluate(() => window.echarts.getInstanceByDom(document.getElementById('chart-throughput')).getOption().series.length);
  assert.ok(series >= 2, `${series} series`);
  assert.ok((await markers(page, 'chart-throughput')).length >= 1, 'annotation pin in the offline chart');
  assert.ok(await page.locator('#annotations li').count() >= 1);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(requests, [], 'the report fetched nothing');
  assert.deepEqual(errors, []);
  await context.close();
});

test('each chart downloads as a PNG', async () => {
  const { chat } = await runIds();
  const page = await env.browser.newPage();
  await page.goto(`${env.server.base}/runs/${chat}`);
  await page.locator('#chart-throughput canvas').waitFor();
  const button = page.locator('#chart-throughput + .png-button');
  await button.waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  assert.equal(download.suggestedFilename(), 'plateau-chart-throughput.png');
  const path = await download.path();
  const bytes = (await import('node:fs')).readFileSync(path);
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
  await page.close();
});

test('the compare view lives in the address: hidden runs, focus metric, scale; junk gets a helpful page', async () => {
  const { chat, other } = await runIds();
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/compare?runs=${chat},${other}&metric=ttft&stat=p99&scale=linear`);
  await page.locator('#cmp-throughput canvas').waitFor();
  await page.locator(`input.run-toggle[data-run="${chat}"]`).uncheck();
  await page.waitForFunction((id) => new URL(location.href).searchParams.get('hide') === id, chat);
  const url = page.url();
  // The address alone reproduces it, in another context.
  const ctx = await env.browser.newContext();
  const again = await ctx.newPage();
  await again.goto(url);
  await again.locator('#cmp-throughput canvas').waitFor();
  assert.equal(await again.locator(`input.run-toggle[data-run="${chat}"]`).isChecked(), false);
  const state = await again.evaluate((name) => {
    const c = window.echarts.getInstanceByDom(document.getElementById('cmp-throughput'));
    const o = c.getOption();
    return { selected: o.legend[0].selected[name], axis: o.xAxis[0].type };
  }, CHAT);
  assert.equal(state.selected, false, 'the hidden run stays hidden');
  assert.equal(state.axis, 'value', 'linear load axis');
  assert.equal(await again.locator('#view-settings select[name="metric"]').inputValue(), 'ttft');
  assert.equal(await again.locator('#view-settings select[name="stat"]').inputValue(), 'p99');
  await ctx.close();
  // Garbage in the address: a page that says what each parameter takes.
  await page.goto(`${env.server.base}/compare?runs=${chat},${other}&scale=cubic&stat=p1000`);
  await page.locator('#view-problems').waitFor();
  const text = await page.locator('#view-problems').innerText();
  assert.match(text, /scale=cubic/);
  assert.match(text, /log or linear/);
  assert.match(text, /stat=p1000/);
  assert.deepEqual(errors.filter((e) => !/status of 4\d\d/.test(e)), []);
  await page.close();
});

test('without JavaScript a range can be annotated and a report saved', async () => {
  const { chat } = await runIds();
  const context = await env.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${env.server.base}/runs/${chat}`);
  await page.locator('#annotate summary').click();
  const form = page.locator('#annotate-form');
  await form.locator('input[name="anchor"][value="range"]').check();
  await form.locator('select[name="from"]').selectOption('64');
  await form.locator('select[name="to"]').selectOption('96');
  await form.locator('select[name="kind"]').selectOption('outlier');
  await form.locator('select[name="effect"]').selectOption('exclude');
  await form.locator('textarea[name="body"]').fill('saturated: KV cache full');
  await form.locator('button[type="submit"]').click();
  await page.waitForURL(/#annotation-\d+$/);
  const item = page.locator('li.annotation', { hasText: 'saturated: KV cache full' });
  await item.waitFor();
  assert.match(await item.locator('.anchor').innerText(), /C=64 … 96/);
  // Excluded levels leave the levels table for the set-aside table.
  assert.equal(await page.locator('#set-aside tbody tr').count(), 2);
  assert.ok(!(await page.locator('#levels tbody').innerText()).includes('803.0'), 'C=64 is out of the analysis');
  await page.locator('#report-form input[name="title"]').fill('no-JS report');
  await page.locator('#report-form button[type="submit"]').click();
  await page.waitForURL(/\/r\/[a-z0-9]{8}$/);
  assert.equal(await page.locator('.report-title').innerText(), 'no-JS report');
  await context.close();
});
