// Browser test of cost and GPUs: a price typed on the prices page (a bad one refused with
// its field named) turns into dollars per million tokens on the run page, at capacity and
// on the compare page; a live sweep against `plateau sim` with its simulated DCGM exporter
// stores GPU telemetry per level and draws the GPU panels and the energy per token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors, startSim, seriesLength } from './support.mjs';

const CHAT = 'Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96';

const env = withAppAndBrowser();

async function runId(name) {
  const runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  return runs.find((r) => r.name === name).id;
}

/** The cells of the cost table's row for load `load`. */
function costRow(page, load) {
  return page.evaluate((load) => {
    const row = [...document.querySelectorAll('#cost-table tbody tr')].find((r) => r.cells[0].innerText.trim() === load);
    return row ? [...row.cells].map((c) => c.innerText.trim()) : null;
  }, load);
}

test('a price set on the prices page turns into dollars per million tokens, never before', async () => {
  const chat = await runId(CHAT);
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/runs/${chat}`);
  assert.equal(await page.locator('#cost-missing').innerText(), 'no price set');
  assert.equal((await costRow(page, '96'))[2], '—', 'no price: no dollars');

  // One click from the run page: the prices page with this run's GPU type filled in.
  const link = page.locator('#set-gpu-price');
  assert.equal(await link.innerText(), 'Set a price for RTX PRO 6000 Blackwell');
  await link.click();
  await page.waitForURL(/\/settings\/prices\?gpu=/);
  // The demo's price for its simulated GPU type is the only one so far.
  assert.match(await page.locator('#prices-table').innerText(), /Simulated GPU \(plateau sim\)\s+\$2\.50/);
  assert.equal(await page.locator('#price-gpu-type').inputValue(), 'RTX PRO 6000 Blackwell');
  assert.match(await page.locator('#price-for').innerText(), new RegExp(`You go back to /runs/${chat} once it is set`));
  // The GPU types the runs hold are offered, and each unpriced one has its own field.
  const offered = await page.locator('#gpu-types option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(offered.includes('RTX PRO 6000 Blackwell'), offered.join(' | '));
  assert.match(await page.locator('#unpriced').innerText(), /RTX PRO 6000 Blackwell — 2 runs/);
  // A bad price stays here, the type and the way back kept, nothing stored.
  await page.locator('#price-usd').fill('-1');
  await page.locator('#price-set').click();
  await page.waitForURL(/error=/);
  assert.match(await page.locator('#price-error').innerText(), /usd_per_gpu_hour/);
  assert.doesNotMatch(await page.locator('#prices-table').innerText(), /RTX PRO 6000/);
  assert.equal(await page.locator('#price-gpu-type').inputValue(), 'RTX PRO 6000 Blackwell');
  // A good one goes back to the run, priced; the prices page lists it with who set it.
  await page.locator('#price-usd').fill('2.50');
  await page.locator('#price-set').click();
  await page.waitForURL(new RegExp(`/runs/${chat}$`));
  assert.match(await page.locator('#cost-basis').innerText(), /\$2\.50 per GPU-hour × 8 GPUs/);
  await page.goto(`${env.server.base}/settings/prices`);
  assert.match(await page.locator('#prices-table').innerText(), /RTX PRO 6000 Blackwell\s+\$2\.50/);
  assert.equal(await page.locator('#price-history tbody tr').count(), 2, "this one and the demo's");
  assert.doesNotMatch(await page.locator('main').innerText(), /RTX PRO 6000 Blackwell — 2 runs/, 'no longer unpriced');

  // 8 GPUs × $2.50 = $20/h; C=96 at 1017 tok/s → 20 / 3600 / 1017 × 10⁶ = $5.46.
  await page.goto(`${env.server.base}/runs/${chat}?slo=e2e:p99<=40s`);
  assert.match(await page.locator('#cost-basis').innerText(), /\$2\.50 per GPU-hour × 8 GPUs/);
  const c96 = await costRow(page, '96');
  assert.equal(c96[2], '$5.46', c96.join(' | '));
  assert.equal(c96[4], '127.1', 'output tok/s per GPU: 1017 / 8');
  // At capacity (C=48, 657 tok/s): $8.46.
  assert.match(await page.locator('#capacity-cost').innerText(), /\$8\.46 per million output tokens at C=48/);
  // …and in the capacity answer at the top, beside the tok/s per GPU.
  assert.equal(
    await page.locator('#slo-gpu').innerText(),
    'At that load: $8.46 per million output tokens; 82.1 tok/s per GPU (8 GPUs).',
  );

  // Compare: each run at its peak.
  const runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  const other = runs.find((r) => r.name !== CHAT && /completions/.test(r.name)).id;
  await page.goto(`${env.server.base}/compare?runs=${chat},${other}`);
  const table = await page.locator('#compare-cost-table').innerText();
  assert.match(table, /\$5\.46/);
  assert.match(table, /\$6\.95/, 'completions: 20 / 3600 / 799.9 × 10⁶');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a live sweep with the simulated DCGM exporter draws the GPU panels and the energy per token', async () => {
  const sim = await startSim();
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  try {
    await page.goto(env.server.base + '/sweeps/new');
    await page.locator('input[name=url]').fill(sim.url);
    await page.locator('input[name=concurrency]').fill('1,4');
    await page.locator('input[name=max_tokens]').fill('32');
    await page.locator('input[name=gpu_metrics_urls]').fill(`${sim.url}/gpu/metrics`);
    await page.locator('input[name=metrics_interval_ms]').fill('100');
    await page.locator('#sweep-submit').click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    await page.waitForFunction(
      () => document.querySelectorAll('#levels tbody tr').length === 2 && !document.getElementById('live'),
      null, { timeout: 90_000 });
    for (const id of ['chart-gpu-util', 'chart-gpu-power', 'chart-gpu-memory', 'chart-gpu-energy']) {
      await page.locator(`#${id} canvas`).waitFor();
      assert.equal(await seriesLength(page, id, 0), 2, `${id}: one point per level`);
    }
    // Utilisation follows the simulated batch: higher at C=4 than at C=1.
    const util = await page.evaluate(() => {
      const chart = window.echarts.getInstanceByDom(document.getElementById('chart-gpu-util'));
      return chart.getOption().series[0].data.map((p) => p[1]);
    });
    assert.ok(util[1] > util[0], `utilisation rises with load: ${util}`);
    const row = await costRow(page, '4');
    assert.match(row[5], /^\d+(\.\d+)?$/, `J per output token at C=4: ${row.join(' | ')}`);
    assert.match(await page.locator('#cost-assumption').innerText(), /GPU power only/);
    assert.deepEqual(errors.filter((e) => !e.includes('EventSource')), []);
  } finally {
    await page.close();
    await sim.stop();
  }
});

test('a run shows its share of the memory-bandwidth roofline; without its model\'s facts, one click to enter them', async () => {
  const runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  const completions = runs.find((r) => r.name.includes('· /v1/completions ·')).id;
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  try {
    // The demo entered the story model's facts: 8 × 1.597 TB/s ÷ 18 GB per step = 710 tok/s at C=1.
    await page.goto(`${env.server.base}/runs/${completions}`);
    assert.match(await page.locator('#roofline-line').innerText(),
      /^At C=1 this deployment decodes at 8\.6 % of its memory-bandwidth roofline \(61\.3 of ≈ 710 tok\/s\): the limit is elsewhere/);
    await page.locator('#roofline summary').click();
    assert.equal(await page.locator('#roofline-table tbody tr').count(), 2, 'C=1 and C=32');
    assert.match(await page.locator('#roofline-assumptions').innerText(), /RTX PRO 6000 Blackwell Server Edition \(matched from the run's “RTX PRO 6000 Blackwell”\)/);

    // Without the facts the page names what is missing and links to where to enter it.
    const del = await fetch(`${env.server.base}/api/v1/hardware/models?model=Kimi-K2.5%20NVFP4`, { method: 'DELETE' });
    assert.equal(del.status, 204);
    await page.reload();
    assert.equal(await page.locator('#roofline-line').count(), 0);
    assert.match(await page.locator('#roofline-missing').innerText(), /^No hardware roofline: enter the active parameters and bits per weight of Kimi-K2\.5 NVFP4/);
    await page.locator('#roofline-enter').click();
    await page.waitForURL(/\/settings\/hardware\?model=/);
    assert.equal(await page.locator('#model-name').inputValue(), 'Kimi-K2.5 NVFP4');
    assert.match(await page.locator('#gpus-table').innerText(), /H100 SXM\s+80\s+3\.35\s+989\.5\s+1,979/);
    // A bad figure stays here, naming its field; a good one goes back to the run.
    await page.locator('#model-active').fill('32');
    await page.locator('#model-bits').fill('four');
    await page.locator('#model-set').click();
    await page.waitForURL(/error=/);
    assert.match(await page.locator('#hardware-error').innerText(), /bits_per_weight/);
    assert.equal(await page.locator('#model-name').inputValue(), 'Kimi-K2.5 NVFP4');
    await page.locator('#model-active').fill('32');
    await page.locator('#model-bits').fill('4.5');
    await page.locator('#model-set').click();
    await page.waitForURL(new RegExp(`/runs/${completions}$`));
    assert.match(await page.locator('#roofline-line').innerText(), /8\.6 % of its memory-bandwidth roofline/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
