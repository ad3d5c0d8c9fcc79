#!/usr/bin/env node
// The flame graph page (`userperf report --format=flamegraph`) in a real browser: Debian's chromium,
// headless, driven over the DevTools protocol (tests/support/flamegraph_browser.js) with nothing
// downloaded.
//
// On files of `userperf record -g` and kernel `perf record -g` of hotspots (perf's part skipped when
// it cannot record here), it checks:
//   1. the frames' widths against `userperf report`'s own percentages (±0.5 points): in the caller
//      view every function's outermost frames against its Children column, in the reverse view the
//      root's children (the leaves) against the Self column;
//   2. a click on a frame zooms: that frame then spans the width, its children scaled by as much;
//      a click on the dimmed root zooms back out;
//   3. a regex typed into the search box: the matched share shown equals the report's children
//      share of the matched functions, and the matched frames are painted in the match color;
//   4. the page makes no network request and names no http(s) URL;
//   5. a screenshot (docs/images/flamegraph.png when USERPERF_UPDATE_SCREENSHOT=1);
// and no script error in any page. A file of two events: the event selector. The differential
// page of two synthetic profiles: red and blue frames, a tooltip with both shares and the change,
// a reverse view.
// Last, the page of a synthetic 1,000,000-sample, 100,000-stack profile: at most 10 MB, drawn, its
// reverse view drawn. How long drawing takes is printed, not judged: the 2 s target is met in
// bench/flamegraph_page_bench.js, against a baseline in the same run, not in a test that a loaded
// machine can fail.
//
// Usage: flamegraph_browser_test.js USERPERF HOTSPOTS FLAMEGRAPH_SYNTHETIC SOURCE_DIR
// Exit 77 (ctest's SKIP_RETURN_CODE) when chromium is not installed.
'use strict';
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { findChromium, Browser, Page } = require('../support/flamegraph_browser.js');

const [userperf, hotspots, synthetic, sourceDir] = process.argv.slice(2).map((p) => path.resolve(p));
const SKIP = 77;
let failures = 0;
function fail(message) {
  console.log(`FAIL: ${message}`);
  ++failures;
}
function ok(message) { console.log(`ok: ${message}`); }

// --- userperf report's own numbers ----------------------------------------------------------------

// The entries of `userperf report --children -g none` (every symbol with a children share):
// {children, self, command, dso, symbol}.
function reportRows(data) {
  const text = execFileSync(userperf, ['report', '-i', data, '--children', '-g', 'none'],
                            { encoding: 'utf8' });
  const rows = [];
  for (const line of text.split('\n')) {
    const m = /^\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+(\S+)\s+\[(.)\]\s+(.*)$/.exec(line);
    if (m) rows.push({ children: +m[1], self: +m[2], command: m[3], dso: m[4], symbol: m[6] });
  }
  return rows;
}

// Shares per (dso, symbol), summed over commands.
function sharesBySymbol(rows) {
  const shares = new Map();
  for (const row of rows) {
    const key = `${row.symbol}\u0000${row.dso}`;
    const share = shares.get(key) || { children: 0, self: 0, symbol: row.symbol, dso: row.dso };
    share.children += row.children;
    share.self += row.self;
    shares.set(key, share);
  }
  return shares;
}

const percentOf = (frame) => 100 * frame.width / frame.canvasWidth;
const TOLERANCE = 0.5;

async function checkRecordedPage(browser, name, data, dir) {
  const html = path.join(dir, `${name}.html`);
  // Relative names: the page's subtitle (the input file) is what the screenshot shows.
  execFileSync(userperf, ['report', '-i', path.basename(data), '--format=flamegraph', '-o',
                          path.basename(html)], { cwd: path.dirname(data) });
  const shares = sharesBySymbol(reportRows(data));
  const page = await Page.open(browser, 1200, 700, fail);
  await page.navigate(`file://${html}`);

  // 1. Widths against the report: caller view, each function's outermost frames = its children%.
  let frames = await page.frames();
  const byNode = new Map(frames.map((f) => [f.node, f]));
  const widthOf = new Map();
  for (const frame of frames) {
    let outermost = true;
    for (let a = byNode.get(frame.parent); a; a = byNode.get(a.parent)) {
      if (a.name === frame.name && a.dso === frame.dso) outermost = false;
    }
    if (!outermost) continue;
    const key = `${frame.name}\u0000${frame.dso}`;
    widthOf.set(key, (widthOf.get(key) || 0) + percentOf(frame));
  }
  let compared = 0;
  for (const [key, share] of shares) {
    if (share.children < 1) continue;
    const shown = widthOf.get(key) || 0;
    if (Math.abs(shown - share.children) > TOLERANCE) {
      fail(`${name}: ${share.symbol} (${share.dso}) is ${shown.toFixed(2)}% wide, the report says ` +
           `children ${share.children.toFixed(2)}%`);
    }
    ++compared;
  }
  if (compared === 0) fail(`${name}: no report row to compare`);
  else ok(`${name}: caller view: ${compared} functions as wide as their children share (±${TOLERANCE})`);

  // ... and the reverse view: the root's children are the leaves, as wide as their self share.
  await page.clickElement('#reverse');
  if (!(await page.state()).reverse) fail(`${name}: the reverse button did not reverse`);
  frames = await page.frames();
  const leaves = frames.filter((f) => f.depth === 1);
  compared = 0;
  for (const leaf of leaves) {
    const share = shares.get(`${leaf.name}\u0000${leaf.dso}`);
    const self = share ? share.self : 0;
    if (Math.abs(percentOf(leaf) - self) > TOLERANCE) {
      fail(`${name}: reverse: ${leaf.name} is ${percentOf(leaf).toFixed(2)}% wide, self ${self}%`);
    }
    ++compared;
  }
  for (const share of shares.values()) {
    if (share.self >= 1 && !leaves.some((l) => l.name === share.symbol && l.dso === share.dso)) {
      fail(`${name}: reverse: no root child for ${share.symbol} (self ${share.self}%)`);
    }
  }
  ok(`${name}: reverse view: the root's ${compared} children as wide as their self share`);
  await page.clickElement('#reverse');

  // 2. Zoom: click the widest frame that is not already full width (one with callees if any).
  frames = await page.frames();
  const hasChildren = new Set(frames.map((f) => f.parent));
  const target = frames.filter((f) => f.depth >= 1 && f.width < f.canvasWidth - 2)
    .sort((a, b) => (hasChildren.has(b.node) - hasChildren.has(a.node)) || b.width - a.width)[0];
  if (!target) {
    fail(`${name}: no frame to zoom into`);
  } else {
    const failuresBefore = failures;
    const children = frames.filter((f) => f.parent === target.node);
    await page.clickFrame(target.node);
    const zoomed = await page.frames();
    const after = zoomed.find((f) => f.node === target.node);
    const scale = target.canvasWidth / target.width;
    if ((await page.state()).focus !== target.node) fail(`${name}: the click did not zoom`);
    if (!after || Math.abs(after.width - after.canvasWidth) > 1 || Math.abs(after.x - after.canvasLeft) > 1) {
      fail(`${name}: zoomed ${target.name} is not full width: ${JSON.stringify(after)}`);
    }
    for (const child of children) {
      const now = zoomed.find((f) => f.node === child.node);
      if (!now || Math.abs(now.width - child.width * scale) > 1) {
        fail(`${name}: child ${child.name} of the zoomed frame: ${now && now.width} px, expected ` +
             `${(child.width * scale).toFixed(1)}`);
      }
    }
    // Back out: the root, dimmed across the bottom.
    const root = zoomed.find((f) => f.depth === 0);
    await page.clickFrame(root.node, 5);
    const restored = (await page.frames()).find((f) => f.node === target.node);
    if ((await page.state()).focus !== 0 || Math.abs(restored.width - target.width) > 0.5) {
      fail(`${name}: clicking the root did not zoom back out`);
    }
    if (failures === failuresBefore) {
      ok(`${name}: zoom into ${target.name} (${(100 * target.width / target.canvasWidth).toFixed(1)}% ` +
         `-> full width, ${children.length} children scaled x${scale.toFixed(2)}) and back out`);
    }
  }

  // 3. Search: the matched share shown against the report's children shares.
  const wanted = ['hot_parse', 'cool_checksum'];
  const expected = wanted.reduce((sum, symbol) => sum +
    [...shares.values()].filter((s) => s.symbol === symbol).reduce((a, s) => a + s.children, 0), 0);
  await page.clickElement('#search');
  await page.send('Input.insertText', { text: '^(hot_parse|cool_checksum)$' });
  const shown = await page.evaluate("document.getElementById('matched').textContent");
  const m = /Matched: ([\d.]+)% of total/.exec(shown);
  if (!m || Math.abs(+m[1] - expected) > TOLERANCE) {
    fail(`${name}: search shows '${shown}', the report's children shares sum to ${expected.toFixed(2)}%`);
  } else {
    ok(`${name}: search ^(hot_parse|cool_checksum)$ shows ${m[1]}% (report: ${expected.toFixed(2)}%)`);
  }
  const matchedFrame = (await page.frames()).find((f) => f.name === 'hot_parse');
  if (matchedFrame) {
    const pixel = await page.evaluate(`(() => { const c = document.getElementById('canvas');
      const r = c.getBoundingClientRect(); const k = c.width / r.width;
      return Array.from(c.getContext('2d').getImageData(
        Math.round((${matchedFrame.x + matchedFrame.width - 3} - r.left) * k),
        Math.round((${matchedFrame.y + 2} - r.top) * k), 1, 1).data); })()`);
    if (pixel[0] !== 230 || pixel[1] !== 0 || pixel[2] !== 230) {
      fail(`${name}: matched frame hot_parse is painted rgb(${pixel.slice(0, 3)}), not the match color`);
    } else {
      ok(`${name}: matched frames painted in the match color`);
    }
  }
  // Clear the search for the screenshot.
  await page.evaluate("(() => { const s = document.getElementById('search'); s.value = '';" +
                      " s.dispatchEvent(new Event('input')); })()");

  // Colors by shared object: the legend names them.
  await page.evaluate("(() => { const s = document.getElementById('color'); s.value = 'dso';" +
                      " s.dispatchEvent(new Event('change')); })()");
  const legend = await page.evaluate("document.getElementById('legend').textContent");
  if (!legend.includes('hotspots')) fail(`${name}: colored by shared object, the legend says '${legend}'`);
  else ok(`${name}: colored by shared object: legend '${legend}'`);
  await page.evaluate("(() => { const s = document.getElementById('color'); s.value = 'kind';" +
                      " s.dispatchEvent(new Event('change')); })()");

  // 4. No network.
  const foreign = page.requests.filter((url) => url !== `file://${html}`);
  if (foreign.length > 0) fail(`${name}: the page requested ${foreign.join(', ')}`);
  if (/https?:\/\//.test(fs.readFileSync(html, 'utf8'))) fail(`${name}: the page names an http(s) URL`);
  if (foreign.length === 0) ok(`${name}: no network request (${page.requests.length} request: the page)`);

  // 5. Screenshot with a tooltip over hot_parse.
  const hot = (await page.frames()).find((f) => f.name === 'hot_parse');
  if (hot) await page.mouse('mouseMoved', hot.x + hot.width / 2, hot.y + hot.height / 2);
  // The header and the graph, not the empty page below.
  const bottom = await page.evaluate(
    "document.getElementById('canvas').getBoundingClientRect().bottom + 12");
  const shot = await page.send('Page.captureScreenshot', {
    format: 'png', clip: { x: 0, y: 0, width: 1200, height: Math.min(700, bottom), scale: 1 },
  });
  const png = path.join(dir, `${name}.png`);
  fs.writeFileSync(png, Buffer.from(shot.data, 'base64'));
  ok(`${name}: screenshot ${png}`);
  if (name === 'userperf' && process.env.USERPERF_UPDATE_SCREENSHOT === '1') {
    const docs = path.join(sourceDir, 'docs', 'images', 'flamegraph.png');
    fs.mkdirSync(path.dirname(docs), { recursive: true });
    fs.copyFileSync(png, docs);
    ok(`screenshot saved as ${docs}`);
  }
  if (process.env.USERPERF_KEEP_PAGES) {
    fs.copyFileSync(html, path.join(process.env.USERPERF_KEEP_PAGES, `${name}.html`));
    fs.copyFileSync(png, path.join(process.env.USERPERF_KEEP_PAGES, `${name}.png`));
  }
  await page.send('Page.close').catch(() => {});
}

async function checkSyntheticPage(browser, dir) {
  const html = path.join(dir, 'synthetic.html');
  const made = spawnSync(synthetic, [html, '1000000', '100000'], { encoding: 'utf8' });
  console.log(made.stderr.trim());
  if (made.status !== 0) throw new Error(`flamegraph_synthetic failed: ${made.stderr}`);
  const label = 'synthetic 1,000,000 samples / 100,000 stacks';
  const size = fs.statSync(html).size;
  const mb = (size / 1e6).toFixed(2);
  if (size > 10e6) fail(`${label}: ${mb} MB, above 10 MB`);
  const page = await Page.open(browser, 1200, 700, fail);
  const wallMs = await page.navigate(`file://${html}`);
  const renderMs = await page.evaluate('window.flamegraph.renderMs');
  const { nodes } = await page.state();
  const drawn = (await page.evaluate('window.flamegraph.frames().length'));
  const reverseMs = await page.evaluate(`(() => { const t = performance.now();
    document.getElementById('reverse').click(); return performance.now() - t; })()`);
  const reverse = await page.state();
  const reverseDrawn = (await page.evaluate('window.flamegraph.frames().length'));
  const line = `${label}: page ${mb} MB, ${nodes} tree nodes, ` +
    `${drawn} frames drawn ${Math.round(renderMs)} ms after navigation start (${wallMs} ms until ` +
    `loaded and drawn); reverse view: ${reverse.nodes} nodes, ${reverseDrawn} frames drawn in ` +
    `${Math.round(reverseMs)} ms`;
  // A tree of 100,000 distinct stacks has at least that many nodes; a screen's worth is drawn.
  if (nodes < 100000 || drawn < 100 || !reverse.reverse || reverse.nodes < 100000 || reverseDrawn < 100) {
    fail(line);
  } else {
    ok(line);
  }
  if (process.env.USERPERF_KEEP_PAGES) {
    const shot = await page.send('Page.captureScreenshot', { format: 'png' });
    fs.writeFileSync(path.join(process.env.USERPERF_KEEP_PAGES, 'synthetic.png'),
                     Buffer.from(shot.data, 'base64'));
  }
  await page.send('Page.close').catch(() => {});
}

// A file of two events (kernel perf record -e cpu-clock -e task-clock): a selector of both, each
// drawn when chosen.
async function checkEventSelector(browser, dir) {
  const data = path.join(dir, 'two-events.data');
  const perf = spawnSync('perf', ['record', '-q', '-e', 'cpu-clock', '-e', 'task-clock', '-g', '-o',
                                  data, '--', hotspots, '0.3'], { encoding: 'utf8' });
  if (perf.status !== 0) {
    console.log('skip: event selector: kernel perf record cannot record here');
    return;
  }
  const html = path.join(dir, 'two-events.html');
  execFileSync(userperf, ['report', '-i', data, '--format=flamegraph', '-o', html]);
  const page = await Page.open(browser, 1200, 700, fail);
  await page.navigate(`file://${html}`);
  const options = await page.evaluate(
    "Array.from(document.querySelectorAll('#event option'), (o) => o.textContent)");
  const visible = await page.evaluate("!document.getElementById('event-choice').hidden");
  if (options.length !== 2 || !visible || !/^cpu-clock/.test(options[0]) || !/^task-clock/.test(options[1])) {
    fail(`event selector: ${visible ? 'shown' : 'hidden'} with ${JSON.stringify(options)}`);
  }
  await page.evaluate("(() => { const s = document.getElementById('event'); s.value = '1';" +
                      " s.dispatchEvent(new Event('change')); })()");
  const state = await page.state();
  const info = await page.evaluate("document.getElementById('info').textContent");
  const drawn = (await page.frames()).length;
  if (state.event !== 1 || !info.startsWith('task-clock') || drawn < 3) {
    fail(`event selector: after choosing task-clock: event ${state.event}, '${info}', ${drawn} frames`);
  } else {
    ok(`event selector: ${options.join(', ')}; task-clock drawn when chosen (${drawn} frames)`);
  }
  await page.send('Page.close').catch(() => {});
}

// The differential page of two synthetic profiles: drawn, colored by change, the tooltip with both
// shares, the reverse view.
async function checkDiffPage(browser, dir) {
  const html = path.join(dir, 'diff.html');
  const made = spawnSync(synthetic, [html, '20000', '2000', '--diff'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`flamegraph_synthetic --diff failed: ${made.stderr}`);
  const page = await Page.open(browser, 1200, 700, fail);
  await page.navigate(`file://${html}`);
  // The callers are at the bottom of a deep graph: scroll there.
  await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
  const frames = await page.frames();
  const wide = frames.filter((f) => f.depth === 6).sort((a, b) => b.width - a.width)[0];
  await page.mouse('mouseMoved', wide.x + wide.width / 2, wide.y + wide.height / 2);
  const tip = await page.evaluate("document.getElementById('tooltip').textContent");
  if (!/base: [\d.]+% .*new: [\d.]+% [\s\S]*change: [-+][\d.]+ points/.test(tip)) {
    fail(`diff page: the tooltip says '${tip}'`);
  }
  const colors = await page.evaluate(`(() => { const c = document.getElementById('canvas');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let red = 0, blue = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] === 250 && d[i + 2] < 200) ++red; else if (d[i + 2] === 250 && d[i] < 200) ++blue;
    }
    return [red, blue]; })()`);
  if (colors[0] === 0 || colors[1] === 0) fail(`diff page: red and blue pixels ${colors}`);
  await page.clickElement('#reverse');
  const reversed = (await page.frames()).length;
  if (reversed < 2) fail('diff page: the reverse view is empty');
  ok(`diff page: tooltip '${tip.split('\n').slice(-2).join('; ')}', ${colors[0]} red and ` +
     `${colors[1]} blue pixels, reverse view of ${reversed} frames`);
  if (process.env.USERPERF_KEEP_PAGES) {
    await page.clickElement('#reverse');
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await page.mouse('mouseMoved', wide.x + wide.width / 2, wide.y + wide.height / 2);
    const shot = await page.send('Page.captureScreenshot', { format: 'png' });
    fs.writeFileSync(path.join(process.env.USERPERF_KEEP_PAGES, 'diff.png'),
                     Buffer.from(shot.data, 'base64'));
  }
  await page.send('Page.close').catch(() => {});
}

async function main() {
  const chromium = findChromium();
  if (!chromium) {
    console.log('SKIP: chromium is not installed (scripts/install-deps.sh installs it)');
    return SKIP;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flamegraph-browser-'));
  const browser = new Browser(chromium, path.join(dir, 'chromium-profile'));
  try {
    const files = [];
    const recorded = spawnSync(userperf, ['record', '-q', '-g', '-o', path.join(dir, 'userperf.data'),
                                          '--', hotspots, '1'], { encoding: 'utf8' });
    if (recorded.status === 0) files.push('userperf');
    else fail(`userperf record: ${recorded.stderr}`);
    const perf = spawnSync('perf', ['record', '-q', '-g', '-F', '999', '-o', path.join(dir, 'perf.data'),
                                    '--', hotspots, '1'], { encoding: 'utf8' });
    if (perf.status === 0) files.push('perf');
    else console.log(`skip: kernel perf record cannot record here: ${(perf.stderr || perf.error || '').toString().trim().split('\n').pop()}`);
    for (const name of files) {
      await checkRecordedPage(browser, name, path.join(dir, `${name}.data`), dir);
    }
    await checkEventSelector(browser, dir);
    await checkDiffPage(browser, dir);
    await checkSyntheticPage(browser, dir);
  } catch (e) {
    fail(`${e.stack}\nchromium's stderr: ${browser.stderr.slice(-2000)}`);
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (failures > 0) {
    console.log(`${failures} failure(s)`);
    return 1;
  }
  return 0;
}

main().then((code) => process.exit(code));
