// Takes the screenshots of the README and docs/pages.md (docs/screenshots/*.png): the run,
// compare, experiment, history, plan, runs list and live-sweep pages, each opened at its top (the summary
// first), in the light and the dark colour scheme, against the demo data, a real vLLM sweep
// folder from the fixtures and `plateau sim`.
//   node end2end/screenshots.mjs        (after .ci/build; PLATEAU_BIN as for the tests)
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { startServer, startSim, launchBrowser, ROOT, FIXTURES } from './tests/support.mjs';

const out = (name) => join(ROOT, 'docs', 'screenshots', `${name}.png`);
const server = await startServer();
const sim = await startSim();
const browser = await launchBrowser();
try {
  const runs = await (await fetch(`${server.base}/api/v1/runs`)).json();
  const chat = runs.find((r) => r.name.includes('chat/completions')).id;
  const completions = runs.find((r) => r.name.includes('surviving')).id;
  // The demo's newest night: still on the worse side of its history's change point.
  const night = runs.find((r) => r.name === 'nightly · sim-llama-8b · 2026-12-03').id;
  // The demo's experiment: three settings of max_num_seqs on a priced simulated GPU.
  const demoExperiment = (await (await fetch(`${server.base}/experiments`)).text()).match(/href="\/experiments\/([a-z0-9]+)"/)[1];
  // An experiment: the real vLLM sweep folder, and the same repeats under a second setting.
  const src = join(FIXTURES, 'vllm-sweep', 'tpu-builders-vllm_qwen3-32b_tpu-v6e_results');
  const setting = readdirSync(src, { withFileTypes: true }).find((e) => e.isDirectory()).name;
  const form = new FormData();
  for (const name of [setting, setting.replace('max_num_seqs=256', 'max_num_seqs=128')]) {
    for (const f of readdirSync(join(src, setting))) {
      form.append('file', new Blob([readFileSync(join(src, setting, f))]), `qwen3-32b-tpu-sweep/${name}/${f}`);
    }
  }
  const experiment = (await (await fetch(`${server.base}/api/v1/runs`, { method: 'POST', body: form })).json()).experiment;
  const drawn = (page) => page.waitForFunction(() => {
    const els = [...document.querySelectorAll('.chart')];
    return els.length > 0 && window.echarts && els.every((el) => window.echarts.getInstanceByDom(el));
  });
  for (const scheme of ['light', 'dark']) {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 820 }, colorScheme: scheme });
    const page = await ctx.newPage();
    await page.goto(`${server.base}/runs/${chat}?slo=e2e:p99%3C%3D40s`);
    await drawn(page);
    await page.screenshot({ path: out(`run-${scheme}`) });
    await page.goto(`${server.base}/compare?runs=${completions},${chat}`);
    await drawn(page);
    await page.screenshot({ path: out(`compare-${scheme}`) });
    await page.goto(`${server.base}${experiment.url}?slo=ttft:p99%3C%3D2s`);
    await drawn(page);
    await page.screenshot({ path: out(`experiment-${scheme}`) });
    await page.goto(`${server.base}/plan?demand=${encodeURIComponent('hourly=4,3,3,2,2,3,6,10,16,20,20,18,17,18,19,20,20,18,15,12,9,7,6,5; prompt=256; output=128')}&slo=${encodeURIComponent('tpot:p99<=15ms')}&experiment=${demoExperiment}`);
    await drawn(page);
    await page.screenshot({ path: out(`plan-${scheme}`) });
    await page.goto(`${server.base}/runs/${night}/history?level=plateau`);
    await drawn(page);
    await page.screenshot({ path: out(`history-${scheme}`) });
    await page.goto(`${server.base}/`);
    await page.locator('#runs tbody tr').first().waitFor();
    await page.screenshot({ path: out(`runs-${scheme}`) });
    // A live sweep, caught after its first level.
    await page.goto(`${server.base}/sweeps/new`);
    await page.locator('input[name=url]').fill(sim.url);
    await page.locator('input[name=concurrency]').fill('1,2,4,8');
    await page.locator('input[name=requests]').fill('16');
    await page.locator('input[name=max_tokens]').fill('96');
    await page.locator('input[name=name]').fill(`live sweep against plateau sim (${scheme})`);
    await page.locator('#sweep-submit').click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    await page.waitForFunction(() => /Level [2-4] of 4 .*left/.test(document.getElementById('live-text')?.textContent || ''), null, { timeout: 60_000 });
    await page.waitForTimeout(1500);
    await page.screenshot({ path: out(`live-sweep-${scheme}`) });
    await page.locator('#cancel-sweep').click();
    await ctx.close();
  }
} finally {
  await browser.close();
  await sim.stop();
  await server.stop();
}
