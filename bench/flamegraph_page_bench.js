#!/usr/bin/env node
// How long the flame graph page (`userperf report --format=flamegraph`) takes to be drawn in
// Debian's chromium, headless, against a baseline measured in the same run: the floor of any page
// that carries the same data, which is the same file with the page's script replaced by one that
// only parses the embedded data (the browser's load of the bytes, and JSON.parse). Issue 14's
// target: a page of at most 10 MB drawn in at most 2 s.
//
// Each page and its floor are loaded REPS times, alternately and each in a fresh tab, so both see
// the same machine noise; the times are performance.now() when the script is done (after
// navigation start). The page's reverse view (built on the first click) is timed as well.
//
// Usage: bench/flamegraph_page_bench.js [PAGE.html ...]
//   With no page: the page of a synthetic profile of 1,000,000 samples in 100,000 distinct stacks,
//   written by FLAMEGRAPH_SYNTHETIC (default build/bin/flamegraph_synthetic).
//   env: REPS (5), CHROMIUM (the browser, default chromium).
// Exit status: 1 when the browser or a page fails; a missed target is reported, not an error.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { findChromium, Browser, Page } = require('../tests/support/flamegraph_browser.js');

const root = path.resolve(__dirname, '..');
const reps = Number(process.env.REPS || 5);
if (!Number.isInteger(reps) || reps < 1) {
  console.log(`flamegraph_page_bench: REPS must be a positive whole number, not '${process.env.REPS}'`);
  process.exit(2);
}
const TARGET_MS = 2000;
const TARGET_BYTES = 10e6;
let errors = 0;
function error(message) {
  console.log(`error: ${message}`);
  ++errors;
}

// The same page with its drawing script replaced: it parses the data and says it is done.
function writeFloorPage(html, floor) {
  const text = fs.readFileSync(html, 'utf8');
  const dataAt = text.indexOf('id="flamegraph-data"');
  const dataEnd = dataAt < 0 ? -1 : text.indexOf('</script>', dataAt);
  const scriptAt = dataEnd < 0 ? -1 : text.indexOf('<script>', dataEnd);
  const scriptEnd = scriptAt < 0 ? -1 : text.indexOf('</script>', scriptAt);
  if (scriptEnd < 0) throw new Error(`${html}: not a flame graph page (no data and script found)`);
  const parseOnly = "window.flamegraph = { renderMs: (JSON.parse(document.getElementById(" +
                    "'flamegraph-data').textContent), performance.now()) };";
  fs.writeFileSync(floor, `${text.slice(0, scriptAt)}<script>${parseOnly}${text.slice(scriptEnd)}`);
}

async function load(browser, html, withReverse) {
  const page = await Page.open(browser, 1200, 700, error);
  try {
    await page.navigate(`file://${html}`);
    const drawnMs = await page.evaluate('window.flamegraph.renderMs');
    if (!withReverse) return { drawnMs };
    const frames = await page.evaluate('window.flamegraph.frames().length');
    if (frames === 0) error(`${html}: no frame drawn`);
    const { nodes } = await page.state();
    const reverseMs = await page.evaluate(`(() => { const t = performance.now();
      document.getElementById('reverse').click(); return performance.now() - t; })()`);
    return { drawnMs, reverseMs, nodes, reverseNodes: (await page.state()).nodes };
  } finally {
    await page.send('Page.close').catch(() => {});
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const range = (values) => `${Math.round(Math.min(...values))}-${Math.round(Math.max(...values))}`;

async function measure(browser, html, dir) {
  const floor = path.join(dir, `floor-${path.basename(html)}`);
  writeFloorPage(html, floor);
  const page = [], base = [], reverse = [];
  let nodes = 0, reverseNodes = 0;
  for (let r = 0; r < reps; ++r) {
    // Alternate which goes first, so neither always gets the warmer browser.
    const order = r % 2 ? ['floor', 'page'] : ['page', 'floor'];
    for (const which of order) {
      if (which === 'floor') {
        base.push((await load(browser, floor, false)).drawnMs);
      } else {
        const result = await load(browser, html, true);
        page.push(result.drawnMs);
        reverse.push(result.reverseMs);
        ({ nodes, reverseNodes } = result);
      }
    }
  }
  const bytes = fs.statSync(html).size;
  const drawn = median(page), parsed = median(base);
  console.log(`${html}\n  ${(bytes / 1e6).toFixed(2)} MB, ${nodes} tree nodes, ${reps} loads each` +
              `\n  drawn after navigation start: median ${Math.round(drawn)} ms (${range(page)})` +
              `\n  floor (load + JSON.parse only): median ${Math.round(parsed)} ms (${range(base)})` +
              `\n  page / floor: ${(drawn / parsed).toFixed(2)}` +
              `\n  reverse view (${reverseNodes} nodes) built and drawn: median ${Math.round(median(reverse))} ms (${range(reverse)})` +
              `\n  target (at most ${TARGET_BYTES / 1e6} MB, drawn in at most ${TARGET_MS} ms): ` +
              `${bytes <= TARGET_BYTES && drawn <= TARGET_MS ? 'met' : 'MISSED'}`);
}

async function main() {
  const chromium = findChromium();
  if (!chromium) {
    console.log('flamegraph_page_bench: chromium is not installed (scripts/install-deps.sh installs it)');
    return 1;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flamegraph-page-bench-'));
  const pages = process.argv.slice(2).map((p) => path.resolve(p));
  const browser = new Browser(chromium, path.join(dir, 'chromium-profile'));
  try {
    if (pages.length === 0) {
      const synthetic = process.env.FLAMEGRAPH_SYNTHETIC ||
                        path.join(root, 'build', 'bin', 'flamegraph_synthetic');
      const html = path.join(dir, 'synthetic-1000000-100000.html');
      const made = spawnSync(synthetic, [html, '1000000', '100000'], { encoding: 'utf8' });
      if (made.status !== 0) {
        throw new Error(`${synthetic}: ${made.stderr || made.error}` +
                        ' (build it: cmake --build build --target flamegraph_synthetic)');
      }
      console.log(made.stderr.trim());
      pages.push(html);
    }
    console.log(`machine: ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ` +
                `${chromium}`);
    for (const html of pages) await measure(browser, html, dir);
  } catch (e) {
    error(`${e.stack}\nchromium's stderr: ${browser.stderr.slice(-2000)}`);
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return errors > 0 ? 1 : 0;
}

main().then((code) => process.exit(code));
