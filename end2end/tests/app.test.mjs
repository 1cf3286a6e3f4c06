// Browser tests of the foundation: runs list, run page with charts, upload, and the same
// pages with JavaScript disabled. Run with `node --test end2end/tests/` after .ci/build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { withAppAndBrowser, startSim, watchErrors, seriesLength, STORY_FILE, ROOT, FIXTURES } from './support.mjs';

const env = withAppAndBrowser();

const CHAT = 'Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96';
const COMPLETIONS = 'Kimi-K2.5 NVFP4 · /v1/completions · C=1–32 (surviving figures)';

test('runs list shows the demo runs, newest first, with their facts', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/');
  const rows = page.locator('#runs tbody tr:not(.group)');
  await rows.first().waitFor();
  // The story's two, the simulated sweep with server metrics, and the simulated history (14),
  // experiment (3) and multi-turn run.
  assert.equal(await rows.count(), 21, 'every demo run');
  const first = (await rows.nth(0).locator('td').allInnerTexts()).slice(1); // after the checkbox
  assert.equal(await rows.nth(0).locator('td a').innerText(), CHAT);
  assert.match(first[0], /partial/, 'the cut-off C=96 level makes the run partial');
  assert.equal(first[1], 'Kimi-K2.5 NVFP4');
  assert.equal(first[2], '8× RTX PRO 6000 Blackwell');
  assert.equal(first[3], '/v1/chat/completions');
  assert.equal(first[4], '4');
  assert.equal(first[5], '1,017.0', 'thousands grouped');
  const second = (await rows.nth(1).locator('td').allInnerTexts()).slice(1);
  assert.match(second[0], /surviving figures/);
  assert.equal(second[4], '2');
  assert.equal(second[5], '799.9');
  // Filter by endpoint, sort by peak: the URL carries the view.
  await page.locator('#filters select[name=endpoint]').selectOption('completions');
  await page.locator('#filters button[type=submit]').click();
  await page.waitForURL(/endpoint=completions/);
  // The story's completions run and the demo experiment's three settings.
  await page.locator('#runs-total', { hasText: '4 runs' }).waitFor();
  assert.equal(await rows.count(), 4);
  for (let i = 0; i < 4; i++) assert.equal(await rows.nth(i).locator('td[data-label="Endpoint"]').innerText(), '/v1/completions');
  await page.goto(env.server.base + '/?sort=peak&dir=asc');
  await page.locator('#runs tbody tr:not(.group)').first().waitFor();
  const peaks = [];
  for (let i = 0; i < (await rows.count()); i++) peaks.push(Number((await rows.nth(i).locator('td').allInnerTexts())[6].replace(/,/g, '')));
  assert.deepEqual(peaks, [...peaks].sort((a, b) => a - b), 'lowest peak first');
  assert.ok(peaks.includes(799.9));
  await page.goto(env.server.base + '/?q=no-such-run-anywhere');
  await page.locator('p.empty').waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('the runs list says where each run plateaus, per GPU, its curve and its capacity at a named SLO', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  const put = await fetch(env.server.base + '/api/v1/slos/ttft-2s', {
    method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ slo: 'ttft:p99<=2s' }),
  });
  assert.ok(put.ok, `PUT the named SLO: ${put.status}`);
  await page.goto(env.server.base + '/');
  const rows = page.locator('#runs tbody tr:not(.group)');
  await rows.first().waitFor();
  const cell = (row, label) => rows.nth(row).locator(`td[data-label="${label}"]`).innerText();
  const chat = rows.filter({ hasText: CHAT });
  const chatCell = (label) => chat.locator(`td[data-label="${label}"]`).innerText();
  // The chat run: 8 GPUs, peak 1,017.0 tok/s; its page names the same knee as the list.
  assert.equal(await chatCell('tok/s per GPU'), '127.1');
  const plateau = await chatCell('Plateau');
  const completions = rows.filter({ hasText: COMPLETIONS });
  assert.equal(await completions.locator('td[data-label="tok/s per GPU"]').innerText(), '100.0', '799.9 over the same 8 GPUs');
  // One polyline point per level of known throughput.
  const points = await chat.locator('svg.sparkline polyline').getAttribute('points');
  assert.equal(points.trim().split(/\s+/).length, 4, points);
  assert.match(await chat.locator('svg.sparkline').getAttribute('aria-label'), /^output tok\/s by load: 32 → /);
  assert.equal(await page.locator('#capacity-head').count(), 0, 'no SLO chosen: no capacity column');
  for (let i = 0; i < (await rows.count()); i++) {
    assert.match(await cell(i, 'Plateau'), /^(C=\d+|\d+(\.\d+)? req\/s|no plateau|—)$/);
  }
  // Choosing the SLO adds the column; it is not a filter (all runs stay, no "Clear").
  await page.locator('#filters select[name=slo]').selectOption('ttft-2s');
  await page.locator('#filters button[type=submit]').click();
  await page.waitForURL(/slo=ttft-2s/);
  await page.locator('#capacity-head', { hasText: 'Capacity at ttft-2s' }).waitFor();
  assert.equal(await rows.count(), 21);
  assert.equal(await page.locator('#filters a', { hasText: 'Clear' }).count(), 0);
  for (let i = 0; i < 21; i++) {
    assert.match(await cell(i, 'Capacity'), /^(C=\d+|none meets it|not measured)$/);
  }
  const capacity = await chat.locator('td[data-label="Capacity"]').innerText();
  // The run page says the same, in its sentence, at this SLO.
  await chat.locator('td a').first().click();
  await page.waitForURL(/\/runs\//);
  await page.goto(page.url() + '?slo=' + encodeURIComponent('ttft:p99<=2s'));
  const sentence = await page.locator('#capacity-sentence').innerText();
  if (capacity.startsWith('C=')) assert.match(sentence, new RegExp(`serves ${capacity}\\b`), sentence);
  else assert.doesNotMatch(sentence, /serves C=/, sentence);
  if (plateau.startsWith('C=')) assert.match(await page.locator('body').innerText(), new RegExp(`${plateau}\\b`));
  assert.deepEqual(errors, []);
  await page.close();
});

test('the chat run page draws both charts with 4 points and tooltips', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/');
  await page.getByRole('link', { name: CHAT }).click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  await page.locator('#run-name').waitFor();
  assert.equal(await page.locator('#run-name').innerText(), CHAT);
  // Charts are drawn by the hydrated wasm app into canvases.
  await page.locator('#chart-throughput canvas').waitFor();
  await page.locator('#chart-latency canvas').waitFor();
  assert.equal(await seriesLength(page, 'chart-throughput', 0), 4, 'measured tok/s');
  assert.equal(await seriesLength(page, 'chart-throughput', 1), 4, 'ideal linear');
  // Cut at C=96 while still rising: where it should plateau, said after the saturation line
  // and drawn dotted from the last measured level on, in a legend entry of its own.
  assert.match(await page.locator('#estimate').innerText(),
    /^Estimated plateau: 1,155\.8 tok\/s \(90 % interval [\d,.]+–[\d,.]+ tok\/s; wide: more levels would narrow it\), 95 % of it from about C=118 — the Universal Scalability Law fitted on the first 3 levels predicted the last one within 5 %\. Measure next at C=120\. Sweep C=120 · Find it adaptively$/);
  const estimated = await page.evaluate(() => {
    const s = window.echarts.getInstanceByDom(document.getElementById('chart-throughput')).getOption().series;
    return s.find((x) => x.name === 'estimated beyond the last level').data;
  });
  assert.deepEqual(estimated[0], [96, 1017], 'it starts at the last measured point');
  assert.ok(estimated.every(([c], i) => i === 0 || c > 96), 'nothing estimated among the measured levels');
  assert.equal(await seriesLength(page, 'chart-latency', 0), 4, 'latency avg');
  assert.equal(await seriesLength(page, 'chart-latency', 1), 3, 'p50 is unknown at the cut-off level');
  // A tooltip appears when the pointer is over the plot (scrolled into view first: the
  // pointer only reaches what the viewport shows).
  await page.locator('#chart-throughput').scrollIntoViewIfNeeded();
  const box = await page.locator('#chart-throughput').boundingBox();
  // (Over the measured part of the axis: beyond C=96 only the estimate has values.)
  await page.mouse.move(box.x + box.width * 0.25, box.y + box.height * 0.5);
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.5);
  const tip = page.locator('#chart-throughput div', { hasText: 'output tok/s' }).last();
  await tip.waitFor({ state: 'visible', timeout: 5000 });
  // The levels table is there too, with the cut-off level flagged.
  assert.equal(await page.locator('#levels tbody tr').count(), 4);
  assert.equal(await page.locator('#levels tbody tr.truncated').count(), 1);
  // The next level, one click away: the New sweep form with it and the run's model.
  await page.locator('#measure-next').click();
  await page.waitForURL(/\/sweeps\/new\?load=concurrency&concurrency=120&model=/);
  assert.equal(await page.locator('input[name=concurrency]').inputValue(), '120');
  assert.equal(await page.locator('input[name=model]').inputValue(), 'Kimi-K2.5 NVFP4');
  // Or an adaptive search from the estimate (C≈118): its first level a quarter of it.
  await page.goBack();
  await page.locator('#search-from-estimate').click();
  await page.waitForURL(/\/sweeps\/new\?load=adaptive&guess=118&model=/);
  assert.equal(await page.locator('select[name=load]').inputValue(), 'adaptive');
  assert.equal(await page.locator('input[name=guess]').inputValue(), '118');
  assert.deepEqual(errors, []);
  await page.close();
});

test('uploading a file shows a preview, then saving lands on its new run page', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  await page.locator('#file-input').setInputFiles(STORY_FILE);
  await page.locator('input[name=model]').fill('Kimi-K2.5 NVFP4');
  await page.locator('input[name=gpu]').fill('8x RTX PRO 6000');
  await page.locator('select[name=endpoint]').selectOption('chat');
  await page.locator('input[name=max_tokens]').fill('1024');
  await page.locator('#import-submit').click();
  // The preview: detected format, the levels, what is unknown; nothing stored yet.
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  assert.equal(await page.locator('#preview-files tbody td.format').innerText(), 'benchmark.py text');
  assert.equal(await page.locator('#levels tbody tr').count(), 4);
  assert.match(await page.locator('.unknown-list').innerText(), /no TTFT/);
  assert.equal(await page.locator('input[name=model]').inputValue(), 'Kimi-K2.5 NVFP4');
  let runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  assert.ok(!runs.some((r) => r.name === 'kimi-k25-nvfp4-chat-c32-c96.txt'), 'not stored before saving');
  await page.locator('#import-save').click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  assert.equal(await page.locator('#run-name').innerText(), 'kimi-k25-nvfp4-chat-c32-c96.txt');
  assert.equal(await page.locator('#levels tbody tr').count(), 4);
  const facts = await page.locator('dl.facts').innerText();
  assert.match(facts, /8× RTX PRO 6000/);
  assert.match(facts, /1024/);
  await page.locator('#chart-throughput canvas').waitFor();
  assert.equal(await seriesLength(page, 'chart-throughput', 0), 4);
  // and it is now first in the list
  await page.goto(env.server.base + '/');
  await page.locator('#runs tbody tr:not(.group)').first().waitFor();
  assert.equal(await page.locator('#runs tbody tr td a').first().innerText(), 'kimi-k25-nvfp4-chat-c32-c96.txt');
  assert.deepEqual(errors, []);
  await page.close();
});

test('several files of one sweep preview as one run, or one run each', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  const files = ['sweep-c4.txt', 'sweep-c1.txt', 'sweep-c2.txt'].map((f) => join(ROOT, 'end2end', 'data', f));
  await page.locator('#file-input').setInputFiles(files);
  await page.locator('input[name=name]').fill('three-file sweep');
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  assert.equal(await page.locator('#preview-files tbody tr').count(), 3);
  assert.equal(await page.locator('.preview-run').count(), 1, 'grouped into one run');
  const loads = await page.locator('.preview-run #levels tbody td.load').allInnerTexts();
  assert.deepEqual(loads.map((t) => t.trim()), ['1', '2', '4'], 'levels in load order');
  // Re-read with one run per file.
  await page.locator('select[name=group]').selectOption('separate');
  await page.locator('#import-update').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  await page.locator('.preview-run').nth(2).waitFor();
  assert.equal(await page.locator('.preview-run').count(), 3);
  // Back to grouped, and save.
  await page.locator('select[name=group]').selectOption('auto');
  await page.locator('#import-update').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  assert.equal(await page.locator('.preview-run').count(), 1);
  await page.locator('#import-save').click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  assert.equal(await page.locator('#run-name').innerText(), 'three-file sweep');
  assert.equal(await page.locator('#levels tbody tr').count(), 3);
  assert.deepEqual(errors, []);
  await page.close();
});

test('vLLM result files of one sweep import as one run with TTFT and definitions', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  const files = ['inferencex-app_glm47_conc4.json', 'inferencex-app_glm47_conc1.json'].map((f) => join(FIXTURES, 'vllm', f));
  await page.locator('#file-input').setInputFiles(files);
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  assert.deepEqual(await page.locator('#preview-files tbody td.format').allInnerTexts(), ['vLLM bench serve', 'vLLM bench serve']);
  assert.equal(await page.locator('.preview-run').count(), 1);
  assert.equal(await page.locator('input[name=model]').inputValue(), 'zai-org/GLM-4.7', 'facts read from the file');
  await page.locator('#import-save').click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  assert.equal(await page.locator('#levels tbody tr').count(), 2);
  await page.locator('#chart-ttft canvas').waitFor();
  assert.equal(await seriesLength(page, 'chart-ttft', 0), 2);
  assert.match(await page.locator('dl.definitions').innerText(), /TTFT counts/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a vLLM sweep folder uploads as an experiment and lands on its page', async () => {
  // The real sweep folder and the same repeats under a second setting, as `vllm bench
  // sweep serve` lays out one folder per setting.
  const src = join(FIXTURES, 'vllm-sweep', 'tpu-builders-vllm_qwen3-32b_tpu-v6e_results');
  const setting = readdirSync(src, { withFileTypes: true }).find((e) => e.isDirectory()).name;
  const root = join(mkdtempSync(join(tmpdir(), 'plateau-sweep-')), 'qwen3-sweep');
  for (const name of [setting, setting.replace('max_num_seqs=256', 'max_num_seqs=128')]) {
    mkdirSync(join(root, name), { recursive: true });
    for (const f of readdirSync(join(src, setting))) copyFileSync(join(src, setting, f), join(root, name, f));
  }
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  await page.locator('#folder-input').setInputFiles(root);
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  // The plan: two runs of one level each, the summaries skipped with their reason.
  assert.match(await page.locator('#preview-experiment').innerText(), /2 runs .* experiment “qwen3-sweep”/);
  assert.equal(await page.locator('.preview-run').count(), 2);
  assert.equal(await page.locator('#preview-files tbody tr').count(), 8);
  const skipped = await page.locator('#preview-files tbody tr.skipped td.format').allInnerTexts();
  assert.equal(skipped.length, 2);
  for (const why of skipped) assert.match(why, /^skipped: /);
  await page.locator('#import-save').click();
  await page.waitForURL(/\/experiments\/[a-z0-9]+$/);
  assert.equal(await page.locator('#experiment-name').innerText(), 'qwen3-sweep');
  assert.deepEqual(await page.locator('#settings-table th.setting').allInnerTexts(), ['max_num_seqs']);
  await page.locator('#experiment-compare').click();
  await page.waitForURL(/\/compare\?runs=/);
  // The setting that tells the runs apart is the first row of the comparison.
  const row = page.locator('tr.differs.setting').first();
  assert.equal((await row.locator('th').innerText()).trim(), 'max_num_seqs');
  const cells = (await row.locator('td').allInnerTexts()).map((t) => t.trim()).sort();
  assert.deepEqual(cells, ['128', '256']);
  // Each run's level holds its three repeats, the cold start flagged.
  await page.goto(env.server.base + '/');
  await page.locator('#runs tbody tr td a', { hasText: 'max_num_seqs=128' }).first().click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  // A client-side navigation: the run's data arrives after the address changes.
  await page.locator('#levels tbody tr').first().waitFor();
  assert.equal(await page.locator('#levels tbody tr').count(), 1);
  assert.match(await page.locator('#levels .badge.warmup').innerText(), /\+1 warm-up/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a folder dropped on the drop zone is walked and sent with its paths', async () => {
  // What the browser hands a drop of the sweep folder: file-system entries (a synthetic
  // drop event cannot carry a directory, so the entries are built with the same API).
  const src = join(FIXTURES, 'vllm-sweep', 'tpu-builders-vllm_qwen3-32b_tpu-v6e_results');
  const setting = readdirSync(src, { withFileTypes: true }).find((e) => e.isDirectory()).name;
  const folders = [setting, setting.replace('max_num_seqs=256', 'max_num_seqs=64')].map((name) => ({
    name,
    files: readdirSync(join(src, setting)).map((f) => ({ name: f, text: readFileSync(join(src, setting, f), 'utf8') })),
  }));
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  const collected = await page.evaluate(async (folders) => {
    const file = (path, text) => ({
      isFile: true, isDirectory: false, fullPath: '/' + path,
      file: (ok) => ok(new File([text], path.split('/').pop(), { type: 'application/json' })),
    });
    // Entries come in batches until an empty one, as readEntries answers.
    const dir = (path, children) => {
      const batches = [children.slice(0, 2), children.slice(2), []];
      return { isFile: false, isDirectory: true, fullPath: '/' + path, createReader: () => ({ readEntries: (ok) => ok(batches.shift() || []) }) };
    };
    const top = 'dropped-sweep';
    const root = dir(top, folders.map((f) => dir(top + '/' + f.name, f.files.map((x) => file(top + '/' + f.name + '/' + x.name, x.text)))));
    const files = await window.plateauCollectEntries([root]);
    window.plateauUseFolder(files);
    return files.map((f) => f.path).sort();
  }, folders);
  assert.equal(collected.length, 8);
  assert.ok(collected.every((p) => p.startsWith('dropped-sweep/SERVE--')), collected.join(' '));
  assert.match(await page.locator('#dropzone span').innerText(), /^dropped-sweep \(8 files\)$/);
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  assert.match(await page.locator('#preview-experiment').innerText(), /2 runs .* experiment “dropped-sweep”/);
  assert.equal(await page.locator('#preview-files tbody tr').count(), 8);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a malformed upload is previewed with its line and cannot be saved', async () => {
  const page = await env.browser.newPage();
  await page.goto(env.server.base + '/upload');
  await page.locator('#file-input').setInputFiles(join(ROOT, 'end2end', 'data', 'malformed-benchmark.txt'));
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  const msg = await page.locator('#preview-error').innerText();
  assert.match(msg, /malformed-benchmark\.txt: line 6, column 26/);
  assert.match(msg, /wall=/);
  assert.ok(await page.locator('#import-save').isDisabled());
  const runs = await (await fetch(env.server.base + '/api/v1/runs')).json();
  assert.ok(!runs.some((r) => r.name === 'malformed-benchmark.txt'));
  await page.close();
});

test('comparing the story runs explains the C=32 difference; runs toggle off and on', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/?tag=demo');
  await page.locator('#runs tbody tr:not(.group)').first().waitFor();
  // Select the two story runs and compare them.
  for (const name of [CHAT, COMPLETIONS]) {
    await page.locator('#runs tbody tr:not(.group)', { hasText: name }).locator('input[type=checkbox]').check();
  }
  await page.locator('#compare-submit').click();
  await page.waitForURL(/\/compare\?runs=/);
  // The earlier (completions) run is the baseline; the explanation is in numbers.
  const why = await page.locator('#explanations').innerText();
  assert.match(why, /At C=32, output throughput fell 42 % \(799\.9 → 464\.4 tok\/s\): tokens per request unchanged at ≈510 \(implied: tok\/s × latency ÷ concurrency\); requests took 73 % longer \(20\.38 s → 35\.23 s\)/);
  // Whether they compare like for like: one collapsed line, the difference inside.
  assert.equal(await page.locator('#comparability summary').innerText(), 'Not like for like with the baseline (what differs)');
  await page.locator('#comparability summary').click();
  assert.match(await page.locator('#verdicts').innerText(), /not like for like: endpoint differs \(chat vs completions\)/);
  // The delta table: C=32 is shared, C=1 and C=48.. are each only in one run.
  const row32 = page.locator('#delta-table tbody tr', { has: page.locator('td.load', { hasText: /^32/ }) });
  // The % change sits under its value (a line of its own): compare the words.
  const cells = (await row32.locator('td').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  // Columns follow the selection order (chat, completions); % changes are against the baseline.
  assert.equal(cells[1], '464.4 -41.9 %');
  assert.equal(cells[2], '35.23 +72.9 %', 'the same statistic (mean) on both sides');
  // Coloured by what the change means: less throughput and more latency are both worse.
  assert.equal(await row32.locator('td').nth(1).locator('.delta').getAttribute('class'), 'delta down worse');
  assert.equal(await row32.locator('td').nth(2).locator('.delta').getAttribute('class'), 'delta up worse');
  assert.equal(cells[4], '799.9');
  assert.equal(cells[5], '20.38');
  assert.match(await page.locator('#delta-table tbody tr').first().innerText(), /only in/);
  assert.equal(await page.locator('#facts-diff tr.differs th').first().innerText(), 'endpoint');
  // Charts: one line per run plus its ideal; toggling a run hides all its series.
  await page.locator('#cmp-throughput canvas').waitFor();
  const selected = () => page.evaluate((name) => {
    const c = window.echarts.getInstanceByDom(document.getElementById('cmp-throughput'));
    const sel = c.getOption().legend[0].selected || {};
    return [sel[name] !== false, sel[name + ' · ideal'] !== false];
  }, CHAT);
  assert.deepEqual(await selected(), [true, true]);
  const toggle = page.locator('.run-chip', { hasText: CHAT }).locator('input.run-toggle');
  await toggle.uncheck();
  assert.deepEqual(await selected(), [false, false]);
  await toggle.check();
  assert.deepEqual(await selected(), [true, true]);
  assert.ok((await page.locator('#anomalies li').count()) >= 1, 'anomalies proposed');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a sweep started from the browser fills in live against the simulator', async () => {
  const sim = await startSim();
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  try {
    await page.goto(env.server.base + '/sweeps/new');
    await page.locator('input[name=url]').fill(sim.url);
    await page.locator('input[name=concurrency]').fill('1,2,4');
    await page.locator('input[name=max_tokens]').fill('16');
    await page.locator('input[name=api_key]').fill('sk-browser-secret');
    await page.locator('input[name=gpu]').fill('2x H100 80GB');
    await page.locator('#sweep-submit').click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    // The page follows the sweep and reloads as levels are stored, until it completes.
    await page.waitForFunction(
      () => document.querySelectorAll('#levels tbody tr').length === 3 && !document.getElementById('live'),
      null, { timeout: 90_000 });
    assert.doesNotMatch(await page.locator('.page-head').innerText(), /running|interrupted/);
    await page.locator('#chart-throughput canvas').waitFor();
    assert.equal(await seriesLength(page, 'chart-throughput', 0), 3);
    assert.ok(!(await page.content()).includes('sk-browser-secret'), 'the key is never shown back');
    // The GPUs given on the form are the run's facts, as an import's.
    assert.match(await page.locator('dl.facts').innerText(), /GPU\s+2× H100 80GB/);
    // A host outside the allow-list is refused with a clear message.
    await page.goto(env.server.base + '/sweeps/new');
    await page.locator('input[name=url]').fill('http://192.0.2.10:8000');
    await page.locator('#sweep-submit').click();
    await page.waitForURL(/\/sweeps\/new\?error=/);
    assert.match(await page.locator('#sweep-error').innerText(), /allow-list/);
    assert.deepEqual(errors.filter((e) => !e.includes('EventSource')), []);
  } finally {
    await page.close();
    await sim.stop();
  }
});

test('without JavaScript the pages still show the runs and the levels table', async () => {
  const ctx = await env.browser.newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await page.goto(env.server.base + '/');
  assert.ok(await page.locator('#runs tbody tr:not(.group)').count() >= 2);
  await page.getByRole('link', { name: CHAT }).click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  const rows = page.locator('#levels tbody tr');
  assert.equal(await rows.count(), 4);
  const c32 = await rows.nth(0).locator('td').allInnerTexts();
  assert.equal(c32[0].trim(), '32');
  assert.equal(c32[3], '464.4');
  assert.equal(c32[8], '35.23');
  const c96 = await rows.nth(3).locator('td').allInnerTexts();
  assert.match(c96[0], /96/);
  assert.equal(c96[9], '—', 'p50 of the cut-off level is unknown, not zero');
  assert.equal(await page.locator('canvas').count(), 0, 'no charts without JavaScript');
  // The completions run shows its Little's-law estimate of tokens per request.
  await page.goto(env.server.base + '/');
  await page.getByRole('link', { name: COMPLETIONS }).click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  const last = await page.locator('#levels tbody tr').nth(1).locator('td').allInnerTexts();
  assert.equal(last[11], '≈509');
  await ctx.close();
});

test('a run where every request failed imports with its failures by kind, with and without JavaScript', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  await page.locator('#file-input').setInputFiles(join(ROOT, 'server/tests/data/aiperf-failed/profile_export_aiperf.json'));
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  await page.locator('#import-save').click();
  await page.waitForURL(/\/runs\/[a-z0-9]+$/);
  const url = page.url();
  assert.match(await page.locator('p.summary').innerText(), /every request failed \(64 requests, most often HTTP 503 Service Unavailable\)/);
  const rows = page.locator('#failures tbody tr');
  assert.equal(await rows.count(), 2);
  assert.match(await rows.nth(0).innerText(), /HTTP 503 Service Unavailable\s+40/);
  assert.match(await rows.nth(1).innerText(), /TimeoutError\s+24/);
  assert.deepEqual(errors, []);
  await page.close();
  // The table is the server's HTML: there without JavaScript too.
  const ctx = await env.browser.newContext({ javaScriptEnabled: false });
  const plain = await ctx.newPage();
  await plain.goto(url);
  assert.equal(await plain.locator('#failures tbody tr').count(), 2);
  assert.match(await plain.locator('#failures').innerText(), /0 \/ 64/);
  await ctx.close();
});

test('an MLPerf summary, a trtllm-bench log and a llama-bench file preview as their tools', async () => {
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/upload');
  await page.locator('#file-input').setInputFiles([
    join(FIXTURES, 'mlperf', 'mlperf-v6.1_azure_gb200-nvl72x72_deepseek-r1_Server_mlperf_log_summary.txt'),
    join(ROOT, 'server/tests/data/trtllm-bench/throughput_pytorch_streaming.log'),
    join(FIXTURES, 'llama-cpp', 'llama-bench-b5606_json_rtx4090_cuda_snowpiercer-15b-q3_k_l.json'),
  ]);
  await page.locator('#import-submit').click();
  await page.waitForURL(/\/imports\/[a-z0-9]+$/);
  const formats = await page.locator('#preview-files tbody td.format').allInnerTexts();
  assert.deepEqual([...new Set(formats)].sort(), ['MLPerf Inference', 'TensorRT-LLM trtllm-bench', 'llama.cpp']);
  assert.equal(await page.locator('.preview-run').count(), 4, 'the MLPerf run, the trtllm-bench run and the two llama-bench tests');
  assert.deepEqual(errors, []);
  await page.close();
});

test('two runs of one name compare apart: legends, tooltips, ticks and unknown counts', async () => {
  // The story's chat sweep imported twice under one name, as a nightly job stores it.
  const ids = [];
  for (let i = 0; i < 2; i++) {
    const form = new FormData();
    form.append('name', 'nightly story');
    form.append('file', new Blob([readFileSync(STORY_FILE)]), 'kimi-k25-nvfp4-chat-c32-c96.txt');
    const r = await fetch(`${env.server.base}/api/v1/runs`, { method: 'POST', body: form });
    assert.equal(r.status, 201, await r.clone().text());
    ids.push((await r.json()).runs[0].id);
  }
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/compare?runs=${ids.join(',')}`);
  await page.locator('#cmp-outcomes canvas').waitFor();
  const seen = await page.evaluate(() => {
    const opt = (id) => window.echarts.getInstanceByDom(document.getElementById(id)).getOption();
    const t = opt('cmp-throughput');
    const runs = t.series.filter((s) => !s.name.includes(' · ')).map((s) => s.name);
    const legend = runs.map((n) => t.legend[0].formatter(n));
    const lat = opt('cmp-latency');
    const out = opt('cmp-outcomes');
    // A count a run does not know is an empty bar (null, the Rust side's tests check which):
    // the page's own tooltip formatter reads it "—", never 0.
    const tip = out.tooltip[0].formatter([{ axisType: 'xAxis.category', axisValueLabel: out.xAxis[0].data[0],
      marker: '', seriesName: out.series[1].name, seriesIndex: 1, value: null }]);
    return {
      runs, legend,
      ticks: t.xAxis[0].axisLabel.customValues,
      filled: lat.series.filter((x) => x.areaStyle || x.stack).length,
      xs: [...new Set(lat.series.flatMap((x) => x.data.map((p) => p[0])))].sort((a, b) => a - b),
      tip,
    };
  });
  assert.equal(seen.runs.length, 2);
  assert.notEqual(seen.runs[0], seen.runs[1], 'two series, two names');
  assert.notEqual(seen.legend[0], seen.legend[1], `legend entries read alike: ${seen.legend}`);
  for (const [i, id] of ids.entries()) assert.ok(seen.runs[i].includes(id.slice(0, 6)), seen.runs[i]);
  assert.deepEqual(seen.ticks, [32, 48, 64, 96], 'ticks at the measured levels');
  assert.equal(seen.filled, 0, 'no filled or stacked latency band');
  // Lines only where a percentile was measured: the cut-off C=96 level has none.
  assert.deepEqual(seen.xs, [32, 48, 64], 'lines only at measured levels');
  assert.match(seen.tip, /: <b>—<\/b>/, seen.tip);
  assert.doesNotMatch(seen.tip, /: <b>0<\/b>/);
  assert.doesNotMatch(await page.locator('main').innerText(), /“nightly story”/, 'a sentence names a run by a name both share');
  assert.deepEqual(errors, []);
  await page.close();
});
