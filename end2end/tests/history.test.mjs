// Browser test of the history page: four imports of one configuration (vLLM 0.6
// three times, then 0.7 about 20 % slower) plotted over time at C=2 — each engine version
// in its colour, the regression gate's limit run by run, the slow run ringed as a
// regression, the page's run marked, every run a point that opens its page — and the
// same numbers in a table; the choices are a GET form, so the URL holds the view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withAppAndBrowser, watchErrors, ROOT } from './support.mjs';

const env = withAppAndBrowser();
const ids = [];

const data = (f) => readFileSync(join(ROOT, 'end2end', 'data', f), 'utf8');
/** The file with every tok/s figure multiplied by `k` (one decimal, as the tool prints). */
const scaled = (text, k) => text.replace(/([\d.]+) tok\/s/g, (_, v) => `${(Number(v) * k).toFixed(1)} tok/s`);

async function importRun(name, version, k) {
  const form = new FormData();
  for (const [key, v] of Object.entries({ name, model: 'history-model', engine: 'vllm', engine_version: version })) {
    form.append(key, v);
  }
  for (const f of ['sweep-c1.txt', 'sweep-c2.txt']) form.append('file', new Blob([scaled(data(f), k)]), f);
  const r = await fetch(`${env.server.base}/api/v1/runs`, { method: 'POST', body: form });
  assert.equal(r.status, 201, await r.clone().text());
  return (await r.json()).runs[0].id;
}

/** The history chart's series named `name` (its data). */
function series(page, name) {
  return page.evaluate((n) => {
    const chart = window.echarts.getInstanceByDom(document.getElementById('chart-history'));
    const s = chart.getOption().series.find((x) => x.name === n);
    return s ? (s.data || []) : null;
  }, name);
}

test('a configuration’s runs over time, with limits, versions and the regression ringed', async () => {
  for (const [i, version, k] of [[0, '0.6', 1], [1, '0.6', 1.01], [2, '0.6', 0.99], [3, '0.7', 0.8]]) {
    // Often within one second: runs stored in the same second keep the order they were stored in.
    ids.push(await importRun(`nightly ${i}`, version, k));
  }
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  // From the run page's link: a client-side navigation.
  await page.goto(`${env.server.base}/runs/${ids[3]}`);
  await page.locator('#chart-throughput canvas').waitFor();
  await page.locator('#history-link').click();
  await page.waitForURL(new RegExp(`/runs/${ids[3]}/history$`));
  await page.locator('#chart-history canvas').waitFor();
  assert.match(await page.locator('#history-key').innerText(), /history-model · vllm/);
  // The default view follows output tok/s at the highest load every run measured (C=2),
  // so the last run's loss is the page's first line without choosing anything.
  assert.equal(await page.locator('#history-level').inputValue(), '2');
  assert.match(await page.locator('#history-verdict').innerText(),
    /^This run regressed: output tok\/s at C=2 is 81\.40? tok\/s, −20 % against the mean of the 3 runs before it \(101\.7\d*; limit 96\.6\d*\)\. 1 of 4 run\(s\) of this configuration cross their limit/);
  assert.deepEqual(await series(page, 'output tok/s'), [[0, 101.7], [1, 102.7], [2, 100.7], [3, 81.4]]);
  // The plateau: two levels only, still climbing, so no run has one — every value unknown,
  // never 0, and the runs are listed as not judged, never as "no regression".
  await page.goto(`${env.server.base}/runs/${ids[3]}/history?level=plateau`);
  await page.locator('#chart-history canvas').waitFor();
  assert.deepEqual(await series(page, 'Plateau throughput'), []);
  const none = await page.locator('#history-verdict').innerText();
  assert.match(none, /^This run has no value for throughput at the plateau: it is not judged here\./);
  assert.doesNotMatch(none, /none crosses/);
  assert.match(none, /4 runs have no value for throughput at the plateau \(— in the table\), so they are not judged: “nightly 0”, “nightly 1”, “nightly 2” and “nightly 3”\./);
  assert.equal(await page.locator('#history-table tbody tr', { hasText: 'not judged: no value' }).count(), 4);
  // C=2 throughput: 101.7, 102.7, 100.7, 81.4 tok/s.
  await page.selectOption('#history-level', '2');
  await page.selectOption('#history-metric', 'output_throughput');
  await page.locator('#history-form button').click();
  // The form also sends its SLO field, empty here (no capacity chart), and the change-point
  // detector's settings.
  await page.waitForURL(/metric=output_throughput&level=2&slo=&alpha=0\.01&min_segment=3$/);
  assert.equal(await page.locator('#chart-history-capacity').count(), 0);
  await page.locator('#chart-history canvas').waitFor();
  await page.waitForFunction(() => document.querySelector('#history-table td.num')?.innerText !== '—');
  assert.deepEqual(await series(page, 'output tok/s'), [[0, 101.7], [1, 102.7], [2, 100.7], [3, 81.4]]);
  assert.deepEqual(await series(page, 'regression'), [[3, 81.4]]);
  assert.deepEqual(await series(page, 'this run'), [[3, 81.4]]);
  assert.deepEqual((await series(page, 'engine version 0.7')), [[3, 81.4]]);
  assert.equal((await series(page, 'engine version 0.6')).length, 3);
  // The limit of the last run: the mean of the three before (101.7) less the larger of
  // 5 % (5.085) and 3 standard deviations (3.0): 96.615.
  const limit = await series(page, 'regression limit');
  assert.equal(limit.length, 3);
  assert.ok(Math.abs(limit[2][1] - 96.615) < 1e-6, JSON.stringify(limit));
  assert.match(await page.locator('#history-verdict').innerText(), /1 of 4 run\(s\) of this configuration cross/);
  const rows = page.locator('#history-table tbody tr');
  assert.equal(await rows.count(), 4);
  assert.match(await rows.first().getAttribute('class'), /regression/);
  assert.match(await rows.first().innerText(), /nightly 3\t.*\t0\.7\t81\.40\t101\.7\t96\.62\tregression/);
  assert.match(await rows.nth(1).innerText(), /\bok\b/);
  // A point opens its run: click the first 0.6 run's marker (once the chart has its
  // final size: the table below it may add a scrollbar after the first draw).
  await page.waitForTimeout(300);
  const at = await page.evaluate(() => {
    const el = document.getElementById('chart-history');
    const chart = window.echarts.getInstanceByDom(el);
    const i = chart.getOption().series.findIndex((x) => x.name === 'engine version 0.6');
    const [x, y] = chart.convertToPixel({ seriesIndex: i }, [0, 101.7]);
    const r = el.getBoundingClientRect();
    return { x: r.left + x, y: r.top + y };
  });
  await page.mouse.move(at.x, at.y);
  await page.waitForTimeout(100);
  await page.mouse.click(at.x, at.y);
  await page.waitForURL(new RegExp(`/runs/${ids[0]}$`));
  assert.equal(await page.locator('#run-name').innerText(), 'nightly 0');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad choice in the address is a 400 that names the field, and the page works without JavaScript', async () => {
  const bad = await fetch(`${env.server.base}/runs/${ids[0]}/history?level=fast`);
  assert.equal(bad.status, 400);
  assert.match(await bad.text(), /level: a positive load/);
  const ctx = await env.browser.newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await page.goto(`${env.server.base}/runs/${ids[1]}/history?metric=e2e.p99&level=1`);
  assert.equal(await page.locator('#history-table tbody tr').count(), 4);
  assert.equal(await page.locator('#history-metric').inputValue(), 'e2e.p99');
  assert.match(await page.locator('figcaption').innerText(), /latency p99 at C=1 \(ms\)/);
  await ctx.close();
});
