// Browser test of issue #14's explanation: the demo's simulated sweep (batch limit 4,
// scraped server metrics) shows the telemetry panels on its run page and says why it
// plateaus; a run without server metrics says the cause cannot be seen from the client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors, seriesLength } from './support.mjs';

const SIM = 'plateau sim · batch limit 4 · C=1–16 (server metrics)';
const CHAT = 'Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96';
const PANELS = ['chart-server-requests', 'chart-kv-cache', 'chart-preemptions', 'chart-prefix-cache', 'chart-server-tok-s'];

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
  assert.match(await page.locator('#why-evidence').innerText(), /running requests \(max\) 4 at C=16/);
  // Every panel is an ECharts instance holding the 5 levels, on the load axis.
  for (const id of PANELS) {
    await page.locator(`#${id} canvas`).waitFor();
    assert.equal(await seriesLength(page, id, 0), 5, id);
  }
  // running (max) at C=16 is the batch limit.
  const running = await page.evaluate(() => {
    const chart = window.echarts.getInstanceByDom(document.getElementById('chart-server-requests'));
    return chart.getOption().series[0].data;
  });
  assert.deepEqual(running.at(-1), [16, 4]);
  // Its per-request records give each latency percentile a bootstrap interval (#15).
  const boot = page.locator('#levels td.boot');
  assert.equal(await boot.count(), 10, 'p50 and p99 of the 5 levels');
  assert.match(await boot.last().innerText(), /^\d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\]$/);
  assert.match(await boot.last().getAttribute('title'), /95 % bootstrap interval .* over 32 requests/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a run without server metrics draws no panel and says the cause cannot be seen', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/');
  await page.getByRole('link', { name: CHAT }).click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  await page.locator('#chart-throughput canvas').waitFor();
  assert.match(await page.locator('#why-sentence').innerText(), /cause of the plateau cannot be seen from the client|cause cannot be seen from the client/);
  for (const id of PANELS) assert.equal(await page.locator(`#${id}`).count(), 0, id);
  assert.deepEqual(errors, []);
  await page.close();
});
