// Browser test of planning a deployment: from the demo's experiment (three settings of
// max_num_seqs on the simulated GPU type, priced at $2.50 a GPU-hour), "Plan a deployment"
// opens the plan page with the experiment filled in; a demand and an SLO typed in the form
// give the verdict first (the cheapest setting), a chart of the demand against what the
// chosen setting's replicas serve hour by hour, a row per setting with its replicas, GPUs
// and dollars, and the exports — the same figures as the JSON API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors } from './support.mjs';

const env = withAppAndBrowser();
const EXPERIMENT = 'max_num_seqs on sim-llama-8b (simulated, 3 trials)';

test('an experiment plans a deployment: the cheapest setting first, its chart, every setting, the exports', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/experiments`);
  await page.getByRole('link', { name: EXPERIMENT }).click();
  await page.waitForURL(/\/experiments\/[a-z0-9]+$/);
  const experiment = page.url().split('/').pop();
  await page.locator('#experiment-plan a').click();
  await page.waitForURL(new RegExp(`/plan\\?experiment=${experiment}$`));
  assert.equal(await page.locator('input[name=experiment]').inputValue(), experiment, 'the experiment filled in');
  assert.equal(await page.locator('#plan-verdict').count(), 0, 'no demand yet: the form alone');
  await page.locator('input[name=demand]').fill('rate=20; prompt=256; output=128');
  await page.locator('input[name=slo]').fill('tpot:p99<=15ms');
  await page.locator('#plan-submit').click();
  await page.waitForURL(/\/plan\?demand=/);
  const verdict = await page.locator('#plan-verdict').innerText();
  assert.match(verdict, /^At 20 req\/s, 256 → 128 tokens under tpot:p99<=15ms the cheapest candidate is “max_num_seqs=\d+”: \d+ replicas?, \d+ GPUs at peak, \d+ GPU-hours a day, \$[\d,]+\.\d\d a day; /);
  assert.doesNotMatch(verdict, /another request mix/, 'measured at the demand\'s mix');

  // The same plan as the API gives it.
  const api = await (await fetch(`${env.server.base}/api/v1/plan?${new URL(page.url()).search.slice(1)}`)).json();
  const best = api.plan.rows[api.plan.best];
  assert.equal(api.plan.verdict, verdict);
  assert.equal(best.usd_day, best.replicas_peak * 24 * 2.5, 'one simulated GPU a replica at $2.50 an hour');

  // The table: one row per setting, the chosen one marked, its dollars as the API says.
  const rows = page.locator('#plan-table tbody tr');
  assert.equal(await rows.count(), 3);
  const chosen = page.locator('#plan-table tbody tr.best');
  assert.equal(await chosen.count(), 1);
  const dollars = `$${best.usd_day.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const chosenText = await chosen.innerText();
  assert.ok(chosenText.includes(best.run_name) && chosenText.includes(dollars), `${chosenText} (${dollars})`);

  // The chart: the demand and what the replicas serve, 24 hours each; the replicas keep
  // 20 % above the demand at every hour.
  await page.locator('#chart-plan canvas').waitFor();
  const series = await page.evaluate(() => {
    const chart = window.echarts.getInstanceByDom(document.getElementById('chart-plan'));
    return chart.getOption().series.map((s) => s.data);
  });
  assert.equal(series.length, 2);
  const [demand, served] = series;
  assert.equal(demand.length, 24);
  assert.equal(served.length, 24);
  assert.ok(demand.every(([, r]) => r === 20), JSON.stringify(demand));
  assert.ok(served.every(([, r]) => r >= 24 - 1e-9), JSON.stringify(served));

  // No scraped server metrics in these runs: no autoscaler threshold, said so.
  assert.match(await page.locator('#autoscale-none').innerText(), /did not scrape the server's metrics/);
  // The exports link to the same request.
  const md = await (await fetch(env.server.base + await page.locator('#plan-exports a', { hasText: 'Markdown' }).getAttribute('href'))).text();
  assert.ok(md.includes('the cheapest candidate is') && md.includes(dollars), md);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a run with scraped server metrics gets its autoscaler trigger and manifests', async () => {
  const runs = await (await fetch(`${env.server.base}/api/v1/runs`)).json();
  const sim = runs.find((r) => r.name.includes('server metrics'));
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  // The demo's simulated run (batch limit 4): at C=4 nothing waits, at C=8 requests do and
  // TTFT p99 passes 200 ms.
  await page.goto(`${env.server.base}/plan?demand=rate%3D5&slo=ttft%3Ap99%3C%3D200ms&runs=${sim.id}`);
  assert.match(await page.locator('#autoscale-sentence').innerText(),
    /^At C=4, the last level that keeps ttft:p99<=200ms, and at C=8, the first that does not: vllm:num_requests_waiting 0 → [\d.]+;/);
  assert.equal(await page.locator('#autoscale-signals tbody tr').first().locator('td').first().innerText(), 'vllm:num_requests_waiting');
  const keda = await page.locator('#keda-yaml').innerText();
  assert.match(keda, /kind: ScaledObject/);
  assert.match(keda, /query: "sum\(vllm:num_requests_waiting\{model_name=\\"plateau-sim\\"\}\)"/);
  await page.locator('summary', { hasText: 'HorizontalPodAutoscaler' }).click();
  assert.match(await page.locator('#hpa-yaml').innerText(), /type: AverageValue/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a day\'s CSV uploaded becomes a demand, chosen again from a compare page, frozen in a snapshot', async () => {
  const runs = (await (await fetch(`${env.server.base}/api/v1/runs`)).json())
    .filter((r) => r.name.includes('max_num_seqs'));
  assert.ok(runs.length >= 2, 'the demo\'s experiment runs');
  const ids = runs.slice(0, 2).map((r) => r.id).join(',');
  const slo = encodeURIComponent('tpot:p99<=15ms');
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/plan?slo=${slo}&runs=${ids}`);
  // A weekday: 2 req/s at night, 14 at the afternoon peak, one row a minute.
  let csv = 'time,requests_per_s\n';
  for (let m = 0; m < 1440; m += 1) csv += `${m * 60},${m >= 780 && m < 1020 ? 14 : 2}\n`;
  await page.locator('#demand-upload summary').click();
  await page.locator('#demand-file-form input[type=file]').setInputFiles({ name: 'weekday.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.locator('#demand-file-form input[name=prompt]').fill('256');
  await page.locator('#demand-file-form input[name=output]').fill('128');
  await page.locator('#demand-file-form input[name=name]').fill('weekday');
  await page.locator('#demand-file-submit').click();
  await page.waitForURL(/\/plan\?demand=weekday&/);
  const verdict = await page.locator('#plan-verdict').innerText();
  assert.match(verdict, /^At “weekday” \(24 hourly rates peaking at 14 req\/s, 256 → 128 tokens\) under tpot:p99<=15ms the cheapest candidate is /);
  // The chart: the day hour by hour, the peak from 13:00 to 17:00.
  await page.locator('#chart-plan canvas').waitFor();
  const demand = await page.evaluate(() => window.echarts.getInstanceByDom(document.getElementById('chart-plan')).getOption().series[0].data);
  assert.equal(demand.length, 24);
  assert.deepEqual(demand.map(([, r]) => r), Array.from({ length: 24 }, (_, h) => (h >= 13 && h < 17 ? 14 : 2)));

  // From the comparison of the same runs, the stored demand is one choice away.
  await page.goto(`${env.server.base}/compare?runs=${ids}&slo=${slo}`);
  await page.locator('#compare-plan-demand select').selectOption('weekday');
  await page.locator('#compare-plan-demand button').click();
  await page.waitForURL(/\/plan\?/);
  assert.equal(await page.locator('#plan-verdict').innerText(), verdict, 'the same plan');

  // Frozen: the snapshot shows the plan as it was, read-only.
  await page.locator('#snapshot-form button').click();
  await page.waitForURL(/\/s\/[0-9a-f]+$/);
  await page.locator('#snapshot-banner').waitFor();
  assert.equal(await page.locator('#plan-verdict').innerText(), verdict);
  assert.equal(await page.locator('#plan-form').count(), 0);
  await page.locator('#chart-plan canvas').waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});
