// The verdict first, on the demo and on imported real files: every run, compare and
// experiment page opens with its summary and its first charts in the first 1,000 px at
// 1,440 px wide, within a height budget; no chart drawn is empty or flat at zero (those are
// said in one "Not drawn" line); no page type is wider than the window at 390 and 1,440 px.
// And the experiment: its own page under its name, the varied setting as a column, the
// best setting with its noise verdict, listed and searchable, grouped in the runs list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withAppAndBrowser, openDrawn, FIXTURES } from './support.mjs';

// The demo's story runs and its simulated sweep with server metrics (the three runs the
// compare budget is for), and one run of each other kind the demo holds.
let demo;
let demoKinds;
const DEMO_EXPERIMENT = 'max_num_seqs on sim-llama-8b (simulated, 3 trials)';
let experiment;
let imported;
const env = withAppAndBrowser(async ({ server }) => {
  const all = await (await fetch(`${server.base}/api/v1/runs`)).json();
  demo = all.filter((r) => r.name.startsWith('Kimi-K2.5') || r.name.includes('server metrics'));
  assert.equal(demo.length, 3);
  demoKinds = ['nightly · sim-llama-8b · 2026-11-29', 'nightly · sim-llama-8b · 2026-12-03', 'max_num_seqs=32', 'multi-turn chat · 5 turns · sim-llama-8b']
    .map((name) => all.find((r) => r.name === name));
  assert.ok(demoKinds.every(Boolean), 'every kind of demo run is there');
  // A vLLM sweep folder of two settings, as `vllm bench sweep serve` lays it out.
  const src = join(FIXTURES, 'vllm-sweep', 'tpu-builders-vllm_qwen3-32b_tpu-v6e_results');
  const setting = readdirSync(src, { withFileTypes: true }).find((e) => e.isDirectory()).name;
  const form = new FormData();
  for (const name of [setting, setting.replace('max_num_seqs=256', 'max_num_seqs=128')]) {
    for (const f of readdirSync(join(src, setting))) {
      form.append('file', new Blob([readFileSync(join(src, setting, f))]), `qwen3-sweep/${name}/${f}`);
    }
  }
  const r = await fetch(`${server.base}/api/v1/runs`, { method: 'POST', body: form });
  assert.equal(r.status, 201, await r.clone().text());
  experiment = (await r.json()).experiment;
  // Real files of other tools, one run each.
  imported = [];
  for (const file of [
    join('aiperf', 'aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json'),
    join('guidellm', 'llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json'),
    join('vllm', 'vllm-nightly_2024-08-23_vllm_055_results.json'),
  ]) {
    const one = new FormData();
    one.append('file', new Blob([readFileSync(join(FIXTURES, file))]), file.split('/').pop());
    const res = await fetch(`${server.base}/api/v1/runs`, { method: 'POST', body: one });
    assert.equal(res.status, 201, `${file}: ${await res.clone().text()}`);
    imported.push(...(await res.json()).runs.map((x) => x.id));
  }
});

const open = (width, path) => openDrawn(env, width, path);

/** Where the summary and the first chart are, the page's size, and every drawn chart's values. */
function layout() {
  const top = (el) => el && el.getBoundingClientRect().top + window.scrollY;
  const bottom = (el) => el && el.getBoundingClientRect().bottom + window.scrollY;
  const summary = document.getElementById('summary');
  const firstChart = document.querySelector('.chart');
  const flat = [];
  document.querySelectorAll('.chart').forEach((el) => {
    const opt = window.echarts.getInstanceByDom(el).getOption();
    const ys = (opt.series || []).flatMap((s) => (s.data || []).map((d) => {
      const v = Array.isArray(d) ? d[1] : d && typeof d === 'object' ? (Array.isArray(d.value) ? d.value[1] : d.value) : d;
      return typeof v === 'number' ? v : null;
    })).filter((v) => v !== null);
    if (ys.length === 0 || ys.every((v) => v === 0)) flat.push(el.id);
  });
  const loose = [...document.querySelectorAll('.chart-empty')].filter((el) => !el.closest('#not-drawn')).map((el) => el.id);
  return {
    summaryTop: top(summary), summaryBottom: bottom(summary), firstChart: top(firstChart),
    height: document.documentElement.scrollHeight, flat, loose,
    scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth,
  };
}

function checkFirstScreen(where, m, maxHeight) {
  assert.ok(m.summaryTop !== undefined && m.summaryTop < 300, `${where}: the summary starts at ${m.summaryTop}`);
  assert.ok(m.summaryBottom <= 900, `${where}: the summary ends at ${m.summaryBottom}, below the first screen`);
  assert.ok(m.firstChart !== undefined && m.firstChart < 1000, `${where}: the first chart starts at ${m.firstChart}`);
  assert.ok(m.height <= maxHeight, `${where}: ${m.height} px tall, over its ${maxHeight} px budget`);
  assert.deepEqual(m.flat, [], `${where}: charts drawn with nothing or only zeros`);
  assert.deepEqual(m.loose, [], `${where}: an empty panel outside the "Not drawn" line`);
}

// Budgets at 1,440 px: the run page with every server and GPU panel, or a regressed run
// with its findings and its cost (the demo's first regressed night: 5,871 px, 6,083 px at an
// SLO), the compare page of three runs with all its sections open to JavaScript (none of it
// collapsed by hand).
const RUN_BUDGET = 6400;
const COMPARE_BUDGET = 4800;

test('run pages: the summary and the first charts in the first screen, no flat or empty panel', async () => {
  const paths = [...demo, ...demoKinds, ...imported.map((id) => ({ id, name: id }))]
    .flatMap((r) => [[`/runs/${r.id}`, r.name], [`/runs/${r.id}?slo=ttft:p99%3C%3D2s`, r.name]]);
  for (const [path, name] of paths) {
    const { ctx, page, errors } = await open(1440, path);
    const m = await page.evaluate(layout);
    await ctx.close();
    assert.deepEqual(errors, [], `${path}: console errors`);
    checkFirstScreen(`${path} (${name})`, m, RUN_BUDGET);
  }
});

test('the simulated run with server metrics: panels flat at zero are said in one line, not drawn', async () => {
  const sim = demo.find((r) => r.name.includes('server metrics'));
  const { ctx, page } = await open(1440, `/runs/${sim.id}`);
  const line = await page.locator('#not-drawn').innerText();
  const drawn = await page.locator('.chart').evaluateAll((els) => els.map((e) => e.id));
  await ctx.close();
  // The simulator never preempts and has no prefix cache: 0 at every level.
  assert.match(line, /^Not drawn: .*Server: preemptions per level: 0 at every level/);
  assert.ok(!drawn.includes('chart-preemptions'), drawn.join(' '));
  assert.ok(drawn.includes('chart-server-requests') || drawn.some((d) => d.includes('requests')), drawn.join(' '));
});

test('compare pages: verdicts first, the view controls on top, caveats said once and collapsed', async () => {
  const ids = demo.map((r) => r.id);
  for (const path of [`/compare?runs=${ids.join(',')}`, `/compare?runs=${ids.slice(0, 2).join(',')}&slo=e2e:p99%3C%3D40s`]) {
    const { ctx, page, errors } = await open(1440, path);
    const m = await page.evaluate(layout);
    const controls = await page.locator('#controls').evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
    const caveat = await page.locator('#comparability').evaluate((el) => ({ open: el.open, text: el.querySelector('summary').innerText }));
    const mentions = (await page.locator('main').innerText()).split('not like for like').length - 1;
    const curve = await page.locator('#curve-verdicts > li').count();
    await ctx.close();
    assert.deepEqual(errors, [], `${path}: console errors`);
    checkFirstScreen(path, m, COMPARE_BUDGET);
    assert.ok(controls < m.firstChart, `${path}: the view controls (${controls}) come after the first chart (${m.firstChart})`);
    assert.equal(caveat.open, false, `${path}: the comparability caveat is open`);
    assert.match(caveat.text, /not like for like with the baseline/i);
    // Said once in the collapsed line, once per run inside it, nowhere else on the page.
    assert.ok(mentions <= ids.length, `${path}: "not like for like" said ${mentions} times`);
    assert.equal(curve, path.includes('slo=') ? 1 : 2, `${path}: one curve line per run against the baseline`);
  }
});

test('the experiment has its page: its name, the setting as a column, the best setting with its noise', async () => {
  const { ctx, page, errors } = await open(1440, experiment.url);
  assert.equal(await page.locator('#experiment-name').innerText(), 'qwen3-sweep');
  assert.deepEqual(await page.locator('#settings-table th.setting').allInnerTexts(), ['max_num_seqs']);
  const labels = (await page.locator('#settings-table td.name a').allInnerTexts()).map((t) => t.trim()).sort();
  assert.deepEqual(labels, ['max_num_seqs=128', 'max_num_seqs=256']);
  // The same measurements under both names: the same peak, within noise from their trials.
  const verdict = await page.locator('#experiment-verdict').innerText();
  assert.match(verdict, /^Best setting: max_num_seqs=(128|256), peak 1,301 tok\/s at 16 req\/s; vs max_num_seqs=(128|256) at 16 req\/s: \+0\.0 % \(95 % CI .*\): within noise\.$/);
  assert.equal(await page.locator('#settings-table tr.best').count(), 1);
  assert.deepEqual(await page.locator('#settings-table tbody tr td:nth-child(3)').allInnerTexts(), ['2', '2'], 'two trials each, the warm-up aside');
  // One curve per setting, named by the setting alone.
  const legend = await page.locator('#exp-throughput').evaluate((el) => window.echarts.getInstanceByDom(el).getOption().series.map((s) => s.name));
  assert.ok(legend.includes('max_num_seqs=128') && legend.includes('max_num_seqs=256'), legend.join(' | '));
  assert.ok(legend.every((n) => !n.includes('SERVE--')), legend.join(' | '));
  const m = await page.evaluate(layout);
  checkFirstScreen(experiment.url, m, 2500);
  // With an SLO: its capacity column, and the best by capacity.
  await page.goto(`${env.server.base}${experiment.url}?slo=ttft:p99%3C%3D2s`);
  assert.match(await page.locator('#settings-table thead').innerText(), /Capacity at ttft:p99/);
  assert.match(await page.locator('#experiment-verdict').innerText(), /highest capacity at ttft:p99<=2s: 16 req\/s/);
  await page.locator('#experiment-compare').click();
  await page.waitForURL(/\/compare\?runs=/);
  await page.locator('#delta-table').waitFor();
  await ctx.close();
  assert.deepEqual(errors, []);
});

test('experiments are listed, searched by name, and group their runs in the runs list', async () => {
  const { ctx, page, errors } = await open(1440, '/experiments');
  // Newest first: the one imported here, then the demo's.
  assert.deepEqual(await page.locator('#experiments tbody td.name').allInnerTexts(), ['qwen3-sweep', DEMO_EXPERIMENT]);
  assert.deepEqual((await page.locator('#experiments tbody td.num').allInnerTexts()).map((t) => t.trim()), ['2', '3']);
  await page.goto(`${env.server.base}/experiments?q=QWEN3`);
  assert.equal(await page.locator('#experiments tbody tr').count(), 1);
  await page.goto(`${env.server.base}/experiments?q=${encodeURIComponent('50%')}`);
  assert.equal(await page.locator('#no-experiments').count(), 1);
  await page.goto(`${env.server.base}/`);
  const groups = page.locator('#runs tr.group a.experiment-link');
  assert.deepEqual(await groups.allInnerTexts(), ['Experiment: qwen3-sweep', `Experiment: ${DEMO_EXPERIMENT}`]);
  const group = groups.first();
  // Each group's runs follow its row: two, then the demo's three.
  const after = await page.locator('#runs tbody tr').evaluateAll((rows) => {
    const starts = rows.map((r, i) => (r.classList.contains('group') ? i : -1)).filter((i) => i >= 0);
    return starts.map((i) => {
      let n = 0;
      while (rows[i + 1 + n] && rows[i + 1 + n].classList.contains('in-group')) n++;
      return n;
    });
  });
  assert.deepEqual(after, [2, 3]);
  await group.click();
  await page.waitForURL(/\/experiments\/[a-z0-9]+$/);
  await page.locator('#experiment-name').waitFor();
  await ctx.close();
  assert.deepEqual(errors, []);
});

test('no page type is wider than the window at 390 and 1,440 px', async () => {
  const run = demo[0].id;
  const ids = demo.map((r) => r.id).join(',');
  const post = async (path, body) => (await fetch(env.server.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
  const report = (await post('/api/v1/reports', { title: 'Weekly', description: 'the story', view: `/compare?runs=${ids}` })).url;
  const snapshot = `/s/${(await post('/api/v1/snapshots', { title: 'Frozen', view: `/runs/${run}` })).id}`;
  const paths = [
    '/', `/runs/${run}`, `/runs/${run}?slo=ttft:p99%3C%3D2s`, `/runs/${run}/history`, `/compare?runs=${ids}`,
    '/experiments', experiment.url, '/upload', '/sweeps/new', '/settings/prices', '/settings/hardware', report, snapshot,
    '/plan', `/plan?demand=rate%3D20&slo=e2e%3Ap99%3C%3D40s&runs=${ids}`,
    // The simulated run with server metrics: the autoscaler's manifests too.
    `/plan?demand=rate%3D5&slo=ttft%3Ap99%3C%3D200ms&runs=${demo.find((r) => r.name.includes('server metrics')).id}`,
    ...imported.map((id) => `/runs/${id}`),
  ];
  for (const width of [390, 1440]) {
    for (const path of paths) {
      const { ctx, page, errors } = await open(width, path);
      const m = await page.evaluate(() => {
        const wide = [...document.querySelectorAll('main *')]
          .filter((el) => !el.closest('.table-wrap') && el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
          .slice(0, 3).map((el) => `${el.tagName}.${el.className}#${el.id}`);
        return { scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth, wide };
      });
      await ctx.close();
      assert.deepEqual(errors, [], `${path} at ${width} px: console errors`);
      assert.ok(m.scroll <= m.client, `${path} at ${width} px: ${m.scroll} px wide in ${m.client} (${m.wide.join(', ')})`);
    }
  }
});
