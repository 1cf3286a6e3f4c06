// Layout tests: at 390, 1440 and 1920 px, on the run page (with and without
// annotations) and the compare page (the story's two runs, and ten long-named runs), every
// chart's legend, axis names and plot area keep apart and stay inside the chart, and no
// page is wider than the window. Measured through each ECharts instance (the grid's plot
// rectangle, the legend view's group, the axis names' text elements), not with pixels.
// Also: the runs list shows its important columns without scrolling at 1440 px, and the
// dark colour scheme reaches the page and the charts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withAppAndBrowser, openDrawn } from './support.mjs';

let chat;
let completions;
const env = withAppAndBrowser(async ({ server }) => {
  const runs = await (await fetch(`${server.base}/api/v1/runs`)).json();
  chat = runs.find((r) => r.name.includes('chat/completions')).id;
  completions = runs.find((r) => r.name.includes('surviving')).id;
});
const WIDTHS = [390, 1440, 1920];

async function post(path, body) {
  const r = await fetch(env.server.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.ok(r.ok, `${path}: ${r.status} ${await r.clone().text()}`);
  return r.json();
}

async function importText(name, text) {
  const form = new FormData();
  form.append('name', name);
  form.append('text', text);
  const r = await fetch(`${env.server.base}/api/v1/runs`, { method: 'POST', body: form });
  assert.equal(r.status, 201, await r.clone().text());
  return (await r.json()).runs[0].id;
}

/** Every chart of the page: its box, the plot area, the legend and the axis names, in the
 *  chart's own pixels; and whether the page is wider than the window. */
function measure() {
  const out = { charts: [], scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth };
  const rectOf = (el) => {
    const r = el.getBoundingRect().clone();
    const m = el.getComputedTransform ? el.getComputedTransform() : el.transform;
    if (m) r.applyTransform(m);
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  };
  document.querySelectorAll('.chart').forEach((el) => {
    const chart = window.echarts.getInstanceByDom(el);
    if (!chart) { out.charts.push({ id: el.id, missing: true }); return; }
    const model = chart.getModel();
    const opt = chart.getOption();
    const W = chart.getWidth();
    const H = chart.getHeight();
    const grid = model.getComponent('grid').coordinateSystem.getRect();
    const legendModel = model.getComponent('legend');
    const legendView = legendModel && chart.getViewOfComponentModel(legendModel);
    let legend = legendView ? rectOf(legendView.group) : null;
    if (legend) {
      // A scrolling legend clips its row to the chart: count what is visible.
      const x0 = Math.max(0, legend.x);
      legend = { x: x0, y: legend.y, w: Math.min(W, legend.x + legend.w) - x0, h: legend.h };
    }
    const names = [opt.xAxis?.[0]?.name, opt.yAxis?.[0]?.name].filter(Boolean);
    const texts = {};
    chart.getZr().storage.getDisplayList(true).forEach((d) => {
      const t = d.style && d.style.text;
      if (names.includes(t) && !texts[t]) texts[t] = rectOf(d);
    });
    out.charts.push({
      id: el.id, W, H,
      grid: { x: grid.x, y: grid.y, w: grid.width, h: grid.height },
      legend,
      names: names.map((n) => ({ name: n, rect: texts[n] || null })),
      boxWidth: el.getBoundingClientRect().width,
      parentWidth: el.parentElement.getBoundingClientRect().width,
    });
  });
  return out;
}

const overlap = (a, b) => a && b && a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
const inside = (r, W, H) => r.x >= -0.5 && r.y >= -0.5 && r.x + r.w <= W + 0.5 && r.y + r.h <= H + 0.5;

function check(where, m) {
  assert.ok(m.scrollWidth <= m.clientWidth, `${where}: the page is ${m.scrollWidth} px wide in a ${m.clientWidth} px window`);
  assert.ok(m.charts.length > 0, `${where}: no chart`);
  for (const c of m.charts) {
    const at = `${where} #${c.id}`;
    assert.ok(!c.missing, `${at}: not drawn`);
    assert.ok(c.boxWidth <= c.parentWidth + 0.5, `${at}: ${c.boxWidth} px box in a ${c.parentWidth} px figure`);
    assert.ok(c.grid.w > 40 && c.grid.h > 80, `${at}: plot squashed to ${JSON.stringify(c.grid)}`);
    assert.ok(inside(c.grid, c.W, c.H), `${at}: plot outside the chart`);
    assert.ok(c.legend && c.legend.h > 0, `${at}: no legend`);
    assert.ok(inside(c.legend, c.W, c.H), `${at}: legend outside the chart ${JSON.stringify(c.legend)}`);
    assert.ok(!overlap(c.legend, c.grid), `${at}: legend ${JSON.stringify(c.legend)} over the plot ${JSON.stringify(c.grid)}`);
    for (const n of c.names) {
      assert.ok(n.rect, `${at}: axis name "${n.name}" not drawn`);
      assert.ok(inside(n.rect, c.W, c.H), `${at}: axis name "${n.name}" cut off ${JSON.stringify(n.rect)} in ${c.W}×${c.H}`);
      assert.ok(!overlap(n.rect, c.legend), `${at}: axis name "${n.name}" under the legend`);
      assert.ok(!overlap(n.rect, c.grid), `${at}: axis name "${n.name}" over the plot`);
    }
    if (c.names.length === 2) assert.ok(!overlap(c.names[0].rect, c.names[1].rect), `${at}: axis names collide`);
  }
}

async function measurePage(width, path) {
  const { ctx, page, errors } = await openDrawn(env, width, path, { needCharts: true });
  const m = await page.evaluate(measure);
  await ctx.close();
  assert.deepEqual(errors, [], `${path} at ${width} px: console errors`);
  return m;
}

test('run page: legend, axis names and plot never collide, without and with annotations', async () => {
  for (const w of WIDTHS) check(`run ${w}px`, await measurePage(w, `/runs/${chat}`));
  await post(`/api/v1/runs/${chat}/annotations`, { anchor: { type: 'point', load_kind: 'concurrency', load: 32 }, kind: 'cause', body: 'Switched to /v1/chat/completions: reasoning tokens count in tok/s but the replies are shorter' });
  await post(`/api/v1/runs/${chat}/annotations`, { anchor: { type: 'range', load_kind: 'concurrency', from: 48, to: 96 }, kind: 'note', body: 'A range of levels worth a long note that makes a long legend entry' });
  await post(`/api/v1/runs/${chat}/annotations`, { anchor: { type: 'point', load_kind: 'concurrency', load: 96 }, kind: 'outlier', body: 'Cut off by the recorder' });
  for (const w of WIDTHS) check(`annotated run ${w}px`, await measurePage(w, `/runs/${chat}`));
});

test('compare page: two runs, and ten long-named runs, at every width', async () => {
  for (const w of WIDTHS) check(`compare ${w}px`, await measurePage(w, `/compare?runs=${completions},${chat}`));
  // The per-level table: at 1440 px the baseline's columns and the other run's are all in
  // view (no column clipped behind a scroll).
  {
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${env.server.base}/compare?runs=${completions},${chat}`);
    const t = await page.evaluate(() => {
      const wrap = document.getElementById('delta-table').parentElement;
      const box = wrap.getBoundingClientRect();
      const heads = [...document.querySelectorAll('#delta-table th')].map((th) => th.getBoundingClientRect().right);
      return { scroll: wrap.scrollWidth, client: wrap.clientWidth, right: box.right, last: Math.max(...heads) };
    });
    await ctx.close();
    assert.ok(t.scroll <= t.client + 1 && t.last <= t.right + 1, `the per-level table is clipped: ${JSON.stringify(t)}`);
  }
  const ids = [];
  for (let i = 1; i <= 10; i++) {
    const levels = [1, 2, 4, 8, 16].map((c) => {
      const t = (60 * c * (1 - c / (40 + 8 * i))).toFixed(1);
      return `C= ${c} | ${c}/ ${c} ok (0 err) | wall= ${(10 + c / 4).toFixed(1)}s | ${t} tok/s | lat avg= ${(2 + c / 8).toFixed(2)} p50= ${(2 + c / 8).toFixed(2)} p99= ${(2.5 + c / 6).toFixed(2)}`;
    }).join('\n');
    ids.push(await importText(`Kimi-K2.5 NVFP4 on 8x RTX PRO 6000 Blackwell, vLLM nightly build ${i}, /v1/chat/completions, max_tokens 4096, run number ${i}`, levels));
  }
  for (const w of WIDTHS) check(`compare of 10 ${w}px`, await measurePage(w, `/compare?runs=${ids.join(',')}`));
});

test('runs list: levels, peak tok/s and when fit at 1440 px; a compact layout at 390 px', async () => {
  for (const w of [1440, 390]) {
    const ctx = await env.browser.newContext({ viewport: { width: w, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${env.server.base}/`);
    const m = await page.evaluate(() => {
      const wrap = document.querySelector('.table-wrap');
      const head = [...document.querySelectorAll('table thead th')].map((th) => {
        const r = th.getBoundingClientRect();
        return { text: th.innerText.trim(), right: r.right, width: r.width, display: getComputedStyle(th).display };
      });
      const box = wrap.getBoundingClientRect();
      return { scroll: wrap.scrollWidth, client: wrap.clientWidth, right: box.right, head,
        doc: document.documentElement.scrollWidth, win: document.documentElement.clientWidth };
    });
    await ctx.close();
    assert.ok(m.doc <= m.win, `${w}px: the page is ${m.doc} px wide in ${m.win}`);
    assert.ok(m.scroll <= m.client + 1, `${w}px: the runs table scrolls (${m.scroll} > ${m.client})`);
    if (w === 1440) {
      for (const col of ['Levels', 'Peak tok/s', 'When']) {
        const th = m.head.find((h) => h.text.startsWith(col));
        assert.ok(th, `${col} column missing: ${m.head.map((h) => h.text)}`);
        assert.ok(th.right <= m.right + 1, `${col} is beyond the table's edge`);
      }
    }
  }
});

test('dark colour scheme: the page and the charts follow the system preference', async () => {
  const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
  const page = await ctx.newPage();
  await page.goto(`${env.server.base}/runs/${chat}`);
  await page.waitForFunction(() => window.echarts && window.echarts.getInstanceByDom(document.getElementById('chart-throughput')));
  const seen = await page.evaluate(() => {
    const rgb = (s) => (s.match(/\d+(\.\d+)?/g) || []).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    const chart = window.echarts.getInstanceByDom(document.getElementById('chart-throughput'));
    // The colour the y-axis name is drawn in (a zrender text element of the chart).
    const name = chart.getOption().yAxis[0].name;
    const el = chart.getZr().storage.getDisplayList(true).find((d) => d.style && d.style.text === name);
    const axisText = el && String(el.style.fill);
    return {
      body: lum(rgb(getComputedStyle(document.body).backgroundColor)),
      text: lum(rgb(getComputedStyle(document.body).color)),
      axisText,
    };
  });
  await ctx.close();
  assert.ok(seen.body < 0.2, `dark page background expected, luminance ${seen.body}`);
  assert.ok(seen.text > 0.6, `light page text expected, luminance ${seen.text}`);
  assert.ok(seen.axisText, 'the chart names an axis text colour');
  const [r, g, b] = (seen.axisText.match(/[0-9a-f]{2}/gi) || []).map((h) => parseInt(h, 16));
  const named = seen.axisText.startsWith('#') ? (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255 : null;
  assert.ok(named === null ? /rgba?\((1\d\d|2\d\d)/.test(seen.axisText) : named > 0.5, `the chart's text is light in the dark theme: ${seen.axisText}`);
});

test('without JavaScript a line says the charts need it, and no blank chart boxes show', async () => {
  const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 900 }, javaScriptEnabled: false });
  const page = await ctx.newPage();
  for (const path of [`/runs/${chat}`, `/compare?runs=${completions},${chat}`]) {
    await page.goto(env.server.base + path);
    const note = page.locator('.charts .no-js');
    assert.ok(await note.isVisible(), `${path}: the no-JavaScript line`);
    assert.match(await note.innerText(), /need JavaScript.*tables below hold every number/);
    assert.equal(await page.locator('.chart').first().isVisible(), false, `${path}: blank chart boxes are hidden`);
  }
  await ctx.close();
});

test('a live sweep: the form shows what applies; progress says level k of n, requests, elapsed and what remains', async () => {
  const { startSim } = await import('./support.mjs');
  const sim = await startSim();
  const page = await env.browser.newPage();
  try {
    await page.goto(env.server.base + '/sweeps/new');
    const shown = async () => page.evaluate(() => [...document.querySelectorAll('#sweep-form [data-load]')]
      .filter((el) => !el.hidden).map((el) => el.querySelector('input,select').name));
    assert.deepEqual(await shown(), ['concurrency']);
    await page.selectOption('select[name=load]', 'rates');
    assert.deepEqual(await shown(), ['rates', 'arrival']);
    await page.selectOption('select[name=load]', 'adaptive');
    assert.deepEqual(await shown(), ['max_concurrency', 'min_gain_pct', 'guess']);
    // The workload's fields: none for a single turn, the conversation's for multi-turn,
    // and the agent's too for an agentic session.
    const workload = async () => page.evaluate(() => [...document.querySelectorAll('#sweep-form [data-workload]')]
      .filter((el) => !el.hidden).map((el) => el.querySelector('input,select').name));
    assert.deepEqual(await workload(), []);
    await page.selectOption('select[name=workload]', 'multi_turn');
    assert.deepEqual(await workload(), ['turns', 'user_tokens', 'system_tokens', 'think_ms', 'think']);
    await page.selectOption('select[name=workload]', 'agentic');
    assert.deepEqual(await workload(), ['turns', 'user_tokens', 'system_tokens', 'think_ms', 'think', 'tool_tokens', 'context_cap_tokens']);
    await page.selectOption('select[name=workload]', 'single_turn');
    await page.selectOption('select[name=load]', 'concurrency');
    await page.locator('input[name=url]').fill(sim.url);
    await page.locator('input[name=concurrency]').fill('1,2,4');
    await page.locator('input[name=requests]').fill('12');
    await page.locator('input[name=max_tokens]').fill('48');
    await page.locator('#sweep-submit').click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    // Level k of n with its requests and the time; after the first level, what remains.
    await page.waitForFunction(() => /Level [23] of 3 \(C=\d\): \d+ of 12 requests done · \d+:\d\d elapsed · about \d+:\d\d left/
      .test(document.getElementById('live-text')?.textContent || ''), null, { timeout: 60_000 });
    // Inside the level: its requests in flight and what it has done so far.
    await page.waitForFunction(() => /This level so far: \d+ in flight · /
      .test(document.getElementById('live-text')?.textContent || ''), null, { timeout: 60_000 });
    await page.waitForFunction(() => !document.getElementById('live'), null, { timeout: 90_000 });
    // The form estimates the next sweep before it starts, from the newest run of the model:
    // this one. Each level kept 4 in flight until 12 were done: ⌈12/C⌉ latencies, plus the
    // warm-up's one, from its mean latency at each C.
    const runs = await (await fetch(`${env.server.base}/api/v1/runs`)).json();
    const done = await (await fetch(`${env.server.base}/api/v1/runs/${runs[0].id}`)).json();
    assert.equal(done.facts.model, 'plateau-sim');
    const latency = (p) => p.measures.find((m) => m.metric === 'e2e' && m.stat === 'mean').value / 1000;
    const expected = done.points.reduce((t, p) => t + (Math.ceil(12 / p.load_value) + 1) * latency(p), 0);
    const measured = done.points.reduce((t, p) => t + p.wall_s, 0);
    await page.goto(env.server.base + '/sweeps/new');
    await page.locator('input[name=concurrency]').fill('1,2,4');
    await page.locator('input[name=requests]').fill('12');
    await page.locator('input[name=max_tokens]').fill('48');
    const estimate = page.locator('#sweep-estimate');
    // Each field change re-estimates: wait for the estimate of this plan.
    const settled = (s) => page.waitForFunction((want) => Number(document.getElementById('sweep-estimate').getAttribute('data-seconds')) === want, s, { timeout: 5000 })
      .catch(async () => assert.fail(`estimate ${await estimate.getAttribute('data-seconds')} s, expected ${s} s: ${await estimate.innerText()}`));
    await settled(Math.round(expected));
    assert.match(await estimate.innerText(), /for 3 levels \(39 requests with warm-ups\), timed from “.*”: its mean latency at each load\.$/);
    // What the same plan took: the estimate is of its order (warm-ups and gaps aside).
    assert.ok(expected > measured / 2 && expected < measured * 2, `estimate ${expected} s, measured ${measured} s`);
    // Twice the tokens: twice the time; another model: no basis, said so.
    await page.locator('input[name=max_tokens]').fill('96');
    await settled(Math.round(expected * 2));
    await page.locator('input[name=model]').fill('no-such-model');
    await page.waitForFunction(() => /^No duration estimate/.test(document.getElementById('sweep-estimate').textContent));
  } finally {
    await page.close();
    await sim.stop();
  }
});

test('the offline compare report lays its charts out the same way (opened from a file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plateau-layout-'));
  try {
    const html = await (await fetch(`${env.server.base}/compare/report.html?runs=${completions},${chat}`)).text();
    const file = join(dir, 'report.html');
    writeFileSync(file, html);
    for (const w of [390, 1440]) {
      const ctx = await env.browser.newContext({ viewport: { width: w, height: 900 } });
      const page = await ctx.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.waitForFunction(() => {
        const els = [...document.querySelectorAll('.chart')];
        return els.length > 0 && window.echarts && els.every((el) => window.echarts.getInstanceByDom(el));
      }, null, { timeout: 20_000 });
      check(`report ${w}px`, await page.evaluate(measure));
      assert.match(await page.locator('#explanations').innerText(), /Why throughput differs/);
      await ctx.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
