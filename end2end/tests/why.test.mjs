// Browser test of the "why it plateaus" explanation: the demo's simulated sweep (batch limit 4,
// scraped server metrics) shows the telemetry panels on its run page and says why it
// plateaus; a run without server metrics says the cause cannot be seen from the client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors, seriesLength } from './support.mjs';

const SIM = 'plateau sim · batch limit 4 · C=1–16 (server metrics)';
const CHAT = 'Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96';
const PANELS = ['chart-server-requests', 'chart-server-tok-s'];
// The simulator reports no KV-cache use, no preemption and no prefix-cache hit: 0 at every
// level, said in the "Not drawn" line rather than drawn as flat panels.
const FLAT = ['chart-kv-cache', 'chart-preemptions', 'chart-prefix-cache'];

async function saidFlat(page) {
  for (const id of FLAT) {
    assert.equal(await page.locator(`#not-drawn #${id}`).count(), 1, id);
    assert.match(await page.locator(`#${id}`).innerText(), /: 0 at every level$/, id);
    assert.equal(await page.locator(`#${id} canvas`).count(), 0, id);
  }
}

const env = withAppAndBrowser();

test('the simulated sweep shows the telemetry panels and why it plateaus', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/');
  await page.getByRole('link', { name: SIM }).click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  const why = page.locator('#why-sentence');
  await why.waitFor();
  const sentence = await why.innerText();
  assert.match(sentence, /at most 4 requests at once/, sentence);
  assert.equal(await page.locator('#why').getAttribute('data-kind'), 'batch_limit');
  // The evidence is collapsed under the sentence.
  await page.locator('#why details.evidence > summary').click();
  assert.match(await page.locator('#why-evidence').innerText(), /running requests \(max\) 4 at C=16/);
  // Every panel is an ECharts instance holding the 5 levels, on the load axis.
  for (const id of PANELS) {
    await page.locator(`#${id} canvas`).waitFor();
    assert.equal(await seriesLength(page, id, 0), 5, id);
  }
  await saidFlat(page);
  // The anomaly that would annotate the why points to it instead of saying it again;
  // accepting it still stores the sentence on the level.
  const said = page.locator('#anomalies li.said-above');
  assert.equal(await said.count(), 1);
  assert.match(await said.innerText(), /why it plateaus, said above/);
  assert.doesNotMatch(await page.locator('#anomalies').innerText(), /at most 4 requests at once/);
  assert.match(await said.locator('input[name=body]').inputValue(), /at most 4 requests at once/);
  // running (max) at C=16 is the batch limit.
  const running = await page.evaluate(() => {
    const chart = window.echarts.getInstanceByDom(document.getElementById('chart-server-requests'));
    return chart.getOption().series[0].data;
  });
  assert.deepEqual(running.at(-1), [16, 4]);
  // Its per-request records give each latency percentile a bootstrap interval.
  const boot = page.locator('#levels td.boot');
  assert.equal(await boot.count(), 10, 'p50 and p99 of the 5 levels');
  assert.match(await boot.last().innerText(), /^\d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\]$/);
  assert.match(await boot.last().getAttribute('title'), /95 % bootstrap interval .* over 32 requests/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a run without server metrics that does not plateau draws no panel and no "why it plateaus"', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/');
  await page.getByRole('link', { name: CHAT }).click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  await page.locator('#chart-throughput canvas').waitFor();
  // The story's chat sweep still climbs at C=96 and has no server metrics: there is no
  // plateau to explain and nothing the client could read a cause from, so no paragraph.
  assert.equal(await page.locator('#why').count(), 0);
  assert.doesNotMatch(await page.locator('main').innerText(), /Why it plateaus/);
  for (const id of PANELS) assert.equal(await page.locator(`#${id}`).count(), 0, id);
  assert.deepEqual(errors, []);
  await page.close();
});

/** The sim run's id, from the runs list. */
async function simRunId() {
  const runs = await (await fetch(`${env.server.base}/api/v1/runs`)).json();
  const run = runs.find((r) => r.name === SIM);
  assert.ok(run, 'the demo has its simulated sweep');
  return run.id;
}

test('a snapshot of the simulated sweep keeps its telemetry panels and its why, hydrated', async () => {
  // A snapshot freezes the server metrics with the run; the page a chat link
  // opens draws them in the browser like the live run page does.
  const id = await simRunId();
  const r = await fetch(`${env.server.base}/api/v1/snapshots`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'frozen telemetry', view: `/runs/${id}` }),
  });
  assert.ok(r.ok, `${r.status} ${await r.clone().text()}`);
  const snap = await r.json();
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/s/${snap.id}`);
  await page.locator('#snapshot-banner').waitFor();
  assert.match(await page.locator('#why-sentence').innerText(), /at most 4 requests at once/);
  for (const id of PANELS) {
    await page.locator(`#${id} canvas`).waitFor();
    assert.equal(await seriesLength(page, id, 0), 5, id);
  }
  await saidFlat(page);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the levels table shows connect time only when a level waited for connections', async () => {
  // The simulated sweep kept its connections alive (no connect column); the
  // same run with a level whose requests paid a retried SYN (~1 s) shows the column, with
  // "—" where no connection was opened, after hydration as before it.
  const id = await simRunId();
  const doc = await (await fetch(`${env.server.base}/api/v1/runs/${id}/export.json`)).json();
  doc.run.name = 'sim with slow connects';
  for (const level of doc.run.levels) level.measures = level.measures.filter((m) => m.metric !== 'connect');
  doc.run.levels[2].measures.push({ metric: 'connect', stat: 'p99', value: 1012.5 }, { metric: 'connect', stat: 'mean', value: 253.1 });
  const form = new FormData();
  form.append('file', new Blob([JSON.stringify(doc)]), 'slow-connects.json');
  const r = await fetch(`${env.server.base}/api/v1/runs`, { method: 'POST', body: form });
  assert.equal(r.status, 201, await r.clone().text());
  const slow = (await r.json()).runs[0].id;

  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/runs/${id}`);
  await page.locator('#chart-throughput canvas').waitFor();
  assert.equal(await page.locator('#levels th', { hasText: 'connect p99 (ms)' }).count(), 0, 'kept alive: no column');
  await page.goto(`${env.server.base}/runs/${slow}`);
  await page.locator('#chart-throughput canvas').waitFor();
  await page.locator('#levels th', { hasText: 'connect p99 (ms)' }).waitFor();
  const cells = await page.locator('#levels td.connect').allInnerTexts();
  assert.equal(cells.length, 5, cells.join(' | '));
  assert.equal(cells[2], '1,012.5');
  assert.equal(cells[0], '—');
  assert.match(await page.locator('#levels td.connect').first().getAttribute('title'), /no connection opened during this level/);
  assert.deepEqual(errors, []);
  await page.close();
});
