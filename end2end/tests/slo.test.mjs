// Browser test of capacity at an SLO: typed into the run page's picker it lands in the
// address, the page answers first with the capacity sentence, the charts draw the limit and
// the passing region; stored under a name it is offered on the compare page, which shows
// each run's capacity and its change; a bad SLO names the part at fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors } from './support.mjs';

const CHAT = 'Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96';

const env = withAppAndBrowser();

/** Name → data of every series of the chart in element `id`. */
function series(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id);
    const chart = el && window.echarts && window.echarts.getInstanceByDom(el);
    if (!chart) return null;
    return Object.fromEntries(chart.getOption().series.map((s) => [s.name, s.data]));
  }, id);
}

/** The x extent of the shaded band of series `name` on the chart in element `id`. */
function band(page, id, name) {
  return page.evaluate(([id, name]) => {
    const chart = window.echarts.getInstanceByDom(document.getElementById(id));
    const s = chart.getOption().series.find((s) => s.name === name);
    const d = s && s.markArea && s.markArea.data[0];
    return d ? [Number(d[0].xAxis), Number(d[1].xAxis)] : null;
  }, [id, name]);
}

async function runIds() {
  const runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  return { chat: runs.find((r) => r.name === CHAT).id, other: runs.find((r) => r.name !== CHAT && /completions/.test(r.name)).id };
}

test('an SLO typed on the run page answers first, draws its limit and the passing region, and is kept by name', async () => {
  const { chat, other } = await runIds();
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/runs/${chat}?scale=linear`);
  await page.locator('#chart-throughput canvas').waitFor();
  assert.equal(await page.locator('#capacity-sentence').count(), 0, 'no SLO, no capacity sentence');

  // Typed into the picker: the address carries it, the other view settings kept.
  await page.locator('#slo-input').fill('e2e:p99<=40s');
  await page.locator('#slo-form button[type="submit"]').click();
  await page.waitForURL(/slo=e2e/);
  assert.match(page.url(), /scale=linear/);
  const sentence = await page.locator('#capacity-sentence').innerText();
  assert.match(sentence, /serves C=48 \(657 tok\/s, 13\.7 tok\/s per user\)/, sentence);
  assert.match(sentence, /the first limit to break is latency p99 at C=64 \(41 s\)/, sentence);
  // Shown first: before where and why it plateaus.
  const order = await page.evaluate(() => {
    const a = document.getElementById('capacity-sentence');
    const b = document.getElementById('saturation');
    return a && b ? a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING : -1;
  });
  assert.ok(order > 0, 'the capacity sentence comes before the saturation sentence');
  // Each level against the limit: C=48 meets it, C=64 fails, C=96 (p99 cut off) is not judged.
  const verdicts = await page.locator('#levels td.slo-verdict').allInnerTexts();
  assert.deepEqual(verdicts, ['meets', 'meets', 'fails: latency p99 41 s', 'not judged']);

  // The charts: the limit at 40 s across the levels, the passing region up to C=48, the estimate.
  await page.locator('#chart-latency canvas').waitFor();
  await page.waitForFunction(() => {
    const c = window.echarts.getInstanceByDom(document.getElementById('chart-latency'));
    return c && c.getOption().series.some((s) => s.name.startsWith('SLO: '));
  });
  const latency = await series(page, 'chart-latency');
  assert.deepEqual(latency['SLO: latency p99 ≤ 40 s'], [[32, 40], [96, 40]]);
  const throughput = await series(page, 'chart-throughput');
  assert.deepEqual(await band(page, 'chart-throughput', 'meets SLO'), [32, 48]);
  assert.deepEqual(throughput['meets SLO'], [[48, 657]]);
  const [[x, y]] = throughput['≈ capacity'];
  assert.ok(x > 48 && x < 64 && y > 657 && y < 803, `${x}, ${y}`);

  // Stored under a name: the page then names it, and the compare page offers it.
  await page.locator('#slo-save input[name="name"]').fill('batch-40s');
  await page.locator('#slo-save button[type="submit"]').click();
  await page.waitForURL(/slo=e2e/);
  await page.locator('#capacity-sentence').waitFor();
  assert.match(await page.locator('#capacity-sentence').innerText(), /Capacity at SLO “batch-40s”/);

  await page.goto(`${env.server.base}/compare?runs=${chat},${other}&baseline=${chat}`);
  await page.locator('#slo-names a', { hasText: 'batch-40s' }).click();
  await page.waitForURL(/slo=e2e/);
  const capacities = await page.locator('#run-capacities').innerText();
  assert.match(capacities, /serves C=48/, capacities);
  assert.match(capacities, /Against the baseline: capacity/, capacities);
  assert.deepEqual(errors, []);
  await page.close();
});

test('an SLO that cannot be read is a 400 naming the part at fault', async () => {
  const { chat } = await runIds();
  const page = await env.browser.newPage();
  const resp = await page.goto(`${env.server.base}/runs/${chat}?slo=${encodeURIComponent('ttft:p99<=2s,tpot:p99<=50q')}`);
  assert.equal(resp.status(), 400);
  const problems = await page.locator('#view-problems').innerText();
  assert.match(problems, /tpot:p99<=50q/);
  assert.match(problems, /unknown unit "q"; write ms or s/);
  await page.close();
});
