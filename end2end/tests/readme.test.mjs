// The README's commands, run. A fenced block whose info string is `sh runnable` is run by
// bash (`set -euo pipefail`) in a fresh folder against a fresh `plateau serve`; the two
// setup commands (`.ci/demo`, `.ci/test`) are not run here — CI runs them itself — but
// must stay the README's first two shell blocks, word for word. Any other shell block must
// be marked runnable, so no untested command can be added.
//
// How a block meets its server and binary, so it can read as a user types it:
// - `target/release/plateau` (as the docs write it) and `plateau` on PATH are the binary
//   under test (PLATEAU_BIN), linked into the block's folder;
// - the server serves `plateau.db` in that folder, so `plateau --db plateau.db …` writes
//   into the database the server reads, as after `plateau serve --db plateau.db`;
// - addresses are substituted as plain text before the block runs: `127.0.0.1:3000` (or
//   `localhost:3000`) becomes the test server's address, and every other loopback port a
//   block names (the simulator's `127.0.0.1:8090`) a free port of its own, the same port
//   wherever the block names it;
// - the result files a block imports (`results.json`) are real fixture files copied in
//   under that name (FILES below).
// Everything a block starts (`plateau sim … &`) is ended with its process group.
//
// After each block: exit status 0, one run stored per storing command (`plateau import`,
// `plateau sweep`, `curl -F file=@… /api/v1/runs`), in the order the block's output names
// them, each complete, with levels of the load kind its command asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, copyFileSync, existsSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT, FIXTURES, freePort, waitUntilUp } from './support.mjs';

const README = join(ROOT, 'README.md');
const BIN = resolve(process.env.PLATEAU_BIN || join(ROOT, 'target', 'release', 'plateau'));
/** A block's result files: the name the README uses → a real file that imports cleanly. */
const FILES = {
  // `vllm bench serve --save-result` of Qwen3-32B on a TPU v6e-8 (SOURCE.txt says where from).
  'results.json': join(FIXTURES, 'vllm-sweep', 'tpu-builders-vllm_qwen3-32b_tpu-v6e_results',
    'SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100',
    'run=0.json'),
};
const SHELLS = new Set(['', 'sh', 'bash', 'shell', 'zsh', 'console', 'shell-session']);
const SETUP = ['.ci/demo', '.ci/test'];
const BLOCK_TIMEOUT_MS = 180_000;

/** The README's fenced blocks: language, flags, text, first line (1-based), section. */
function fencedBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(.*)$/.exec(lines[i]);
    if (!open) {
      const h = /^#{1,6}\s+(.*)$/.exec(lines[i]);
      if (h) section = h[1].trim();
      continue;
    }
    const [, indent, fence, info] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[j]);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    const [lang = '', ...flags] = info.trim().split(/\s+/).filter(Boolean);
    blocks.push({ lang: lang.toLowerCase(), flags, text: body.join('\n'), line: i + 1, section });
    i = j;
  }
  return blocks;
}

const blocks = fencedBlocks(readFileSync(README, 'utf8'));
const shellBlocks = blocks.filter((b) => SHELLS.has(b.lang));
const runnable = shellBlocks.filter((b) => b.flags.includes('runnable'));

test('the setup commands open the README, and CI runs the test command', () => {
  assert.deepEqual(shellBlocks.slice(0, 2).map((b) => [b.lang, b.flags, b.text.trim()]),
    SETUP.map((c) => ['sh', [], c]), 'the first two shell blocks are `.ci/demo` and `.ci/test`, not marked runnable');
  for (const c of SETUP) {
    assert.ok(statSync(join(ROOT, c)).mode & 0o111, `${c} is executable`);
  }
  const run = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  assert.match(run, /^\s*(exec\s+)?\.ci\/test(\s|$)/m, '.ci/run calls .ci/test');
});

test('every other shell block of the README is run by this test', () => {
  const untested = shellBlocks.slice(2).filter((b) => !(b.lang === 'sh' && b.flags.includes('runnable')));
  assert.deepEqual(untested.map((b) => `line ${b.line}: \`\`\`${[b.lang, ...b.flags].join(" ")}`), [],
    'mark these `sh runnable` (or make them not shell)');
  assert.ok(runnable.length >= 2, `the README has runnable blocks (${runnable.length})`);
});

/** Commands of a block: continuation lines joined, comments and blank lines left out. */
function commands(text) {
  return text.replace(/\\\n/g, ' ').split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean);
}

/** What a command stores, if anything: `{ what, model?, loadKind?, capacity? }`. */
function storing(cmd) {
  const words = cmd.split(/\s+/);
  const plateau = words.findIndex((w) => /(^|\/)plateau$/.test(w));
  const quoted = (flag) => {
    const m = new RegExp(`${flag}[= ]("[^"]*"|'[^']*'|\\S+)`).exec(cmd);
    return m ? m[1].replace(/^["']|["']$/g, '') : undefined;
  };
  if (plateau >= 0) {
    const sub = words.slice(plateau + 1).find((w, k, rest) => !w.startsWith('-') && !(rest[k - 1] || '').match(/^--(db|log-format)$/));
    if (sub === 'import') return { what: 'import', model: quoted('--model') };
    if (sub === 'sweep') {
      const rate = /\s--rates[= ]/.test(cmd) || /\s--load[= ]rate\b/.test(cmd);
      return { what: 'sweep', model: quoted('--model'), loadKind: rate ? 'request_rate' : 'concurrency', capacity: /\s--find[= ]capacity\b/.test(cmd) };
    }
    return null;
  }
  if (/^curl\s/.test(cmd) && /\s-F\s+['"]?file=@/.test(cmd) && /\/api\/v1\/runs(\s|'|"|$)/.test(cmd) && !/dry_run=true/.test(cmd)) {
    return { what: 'curl import', model: quoted('-F\\s+model') };
  }
  return null;
}

/** `plateau serve` on a free port, serving `plateau.db` in `dir`, no demo data. */
async function serve(dir, env) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(BIN, ['serve', '--addr', `127.0.0.1:${port}`, '--db', join(dir, 'plateau.db')], {
    env, cwd: dir, stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitUntilUp(child, `${base}/healthz`, 'plateau serve', 30);
  return {
    base,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      return child.exitCode;
    },
  };
}

/** Ends every process of group `pgid` (the block's bash and what it left running). */
async function killGroup(pgid) {
  const alive = () => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
  try { process.kill(-pgid, 'SIGTERM'); } catch { /* already gone */ }
  for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive()) try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
}

/** Runs `script` with bash in its own process group; resolves with status and output. */
async function runBlock(script, cwd, env) {
  const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const closed = new Promise((r) => child.once('close', r));
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; killGroup(child.pid); }, BLOCK_TIMEOUT_MS);
  // `exit`, not `close`: a process left in the background keeps the pipes open.
  const status = await new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
  clearTimeout(timer);
  await killGroup(child.pid);
  // The pipes close once nothing of the group holds them: all output is read.
  await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000).unref())]);
  return { status, stdout, stderr, timedOut };
}

for (const block of runnable) {
  test(`README, ${block.section} (line ${block.line}): the block runs`, { timeout: BLOCK_TIMEOUT_MS + 60_000 }, async (t) => {
    assert.ok(existsSync(BIN), `${BIN} is missing: run .ci/build --release first`);
    const dir = mkdtempSync(join(tmpdir(), 'plateau-readme-'));
    try {
      const bin = join(dir, 'target', 'release');
      mkdirSync(bin, { recursive: true });
      symlinkSync(BIN, join(bin, 'plateau'));
      const home = join(dir, '.home');
      mkdirSync(home);
      for (const [name, from] of Object.entries(FILES)) copyFileSync(from, join(dir, name));
      const env = {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        // A command that forgets --db writes here, not into someone's home (and is caught:
        // its run never reaches the server).
        HOME: home,
        XDG_DATA_HOME: join(home, 'data'),
        RUST_LOG: 'warn',
        NO_PROXY: '127.0.0.1,localhost',
        no_proxy: '127.0.0.1,localhost',
      };
      for (const k of ['PLATEAU_DB', 'PLATEAU_TOKEN', 'PLATEAU_API_KEY', 'PLATEAU_ADDR', 'PLATEAU_AUTH', 'LEPTOS_SITE_ROOT']) delete env[k];

      const server = await serve(dir, env);
      let stopStatus;
      try {
        const ports = new Map([['3000', new URL(server.base).port]]);
        for (const [, port] of block.text.matchAll(/\b(?:127\.0\.0\.1|localhost):(\d+)\b/g)) {
          if (!ports.has(port)) ports.set(port, String(await freePort()));
        }
        const text = block.text.replace(/\b(127\.0\.0\.1|localhost):(\d+)\b/g, (_, host, port) => `${host}:${ports.get(port)}`);
        writeFileSync(join(dir, 'block.sh'), text);

        const started = Date.now();
        const out = await runBlock(`set -euo pipefail\n${text}\n`, dir, env);
        t.diagnostic(`ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const shown = `\n--- block (line ${block.line}) ---\n${text}\n--- stdout ---\n${out.stdout}\n--- stderr ---\n${out.stderr}`;
        assert.ok(!out.timedOut, `the block ran longer than ${BLOCK_TIMEOUT_MS / 1000} s${shown}`);
        assert.equal(out.status, 0, `the block exits with status 0${shown}`);

        // One run per storing command, named in the output in the commands' order.
        const expected = commands(block.text).map(storing).filter(Boolean);
        const ids = [...new Set([...out.stdout.matchAll(/\/runs\/([A-Za-z0-9_-]+)/g)].map((m) => m[1]))];
        assert.equal(ids.length, expected.length,
          `${expected.length} runs stored (${expected.map((e) => e.what).join(', ')}), the output names ${ids.length}${shown}`);
        const list = await (await fetch(`${server.base}/api/v1/runs`)).json();
        assert.deepEqual(list.map((r) => r.id).sort(), [...ids].sort(), `the server holds exactly the block's runs${shown}`);
        for (const [k, want] of expected.entries()) {
          const res = await fetch(`${server.base}/api/v1/runs/${ids[k]}`);
          assert.equal(res.status, 200);
          const run = await res.json();
          const label = `${want.what} → run ${ids[k]} (${run.name})`;
          assert.equal(run.status, 'complete', label);
          assert.ok(run.points.length >= 1, `${label}: has levels`);
          if (want.model) assert.equal(run.facts.model, want.model, `${label}: the model given`);
          if (want.loadKind) {
            assert.deepEqual([...new Set(run.points.map((p) => p.load_kind))], [want.loadKind], `${label}: load kind`);
          }
          if (want.capacity) assert.match(run.facts.notes, /capacity/i, `${label}: the capacity search's finding`);
          t.diagnostic(`${label}: ${run.points.length} levels`);
        }
      } finally {
        stopStatus = await server.stop();
      }
      assert.equal(stopStatus, 0, 'the server stops cleanly');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
