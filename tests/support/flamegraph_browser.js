// Debian's chromium, headless, driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: NUL-separated JSON, commands on fd 3, replies and events on fd 4) with
// nothing downloaded; and a tab of it showing a flame graph page (`userperf report
// --format=flamegraph`), which sets window.flamegraph once drawn. Shared by the browser test
// (tests/integration/flamegraph_browser_test.js) and the page's benchmark
// (bench/flamegraph_page_bench.js).
'use strict';
const { spawn, spawnSync } = require('child_process');

function findChromium() {
  for (const name of [process.env.CHROMIUM, 'chromium', 'chromium-browser']) {
    if (!name) continue;
    const found = spawnSync('sh', ['-c', `command -v "${name}"`], { encoding: 'utf8' });
    if (found.status === 0) return found.stdout.trim();
  }
  return null;
}

class Browser {
  constructor(executable, profileDir) {
    this.process = spawn(executable, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage', '--hide-scrollbars', '--remote-debugging-pipe',
      `--user-data-dir=${profileDir}`, 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.process.stderr.on('data', (chunk) => { this.stderr += chunk; });
    this.input = this.process.stdio[3];
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    let buffered = Buffer.alloc(0);
    this.process.stdio[4].on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let end; (end = buffered.indexOf(0)) >= 0;) {
        const message = JSON.parse(buffered.subarray(0, end).toString('utf8'));
        buffered = buffered.subarray(end + 1);
        if (message.id !== undefined && this.pending.has(message.id)) {
          const { resolve, reject, method } = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
          else resolve(message.result);
        } else if (message.method) {
          for (const listener of this.listeners) listener(message);
        }
      }
    });
    this.exited = new Promise((resolve) => this.process.on('exit', resolve));
  }
  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.input.write(JSON.stringify(message) + '\0');
    });
  }
  waitFor(predicate, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const listener = (message) => {
        if (!predicate(message)) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
        resolve(message);
      };
      this.listeners.push(listener);
    });
  }
  async close() {
    try {
      await Promise.race([this.send('Browser.close'), new Promise((r) => setTimeout(r, 2000))]);
    } catch (e) { /* already gone */ }
    const killer = setTimeout(() => this.process.kill('SIGKILL'), 3000);
    await this.exited;
    clearTimeout(killer);
  }
}

// One tab: navigation, evaluation, real mouse and keyboard input.
class Page {
  // onScriptError(message): called for each uncaught exception in the page.
  static async open(browser, width, height, onScriptError) {
    const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(browser, sessionId);
    page.requests = [];
    browser.listeners.push((message) => {
      if (message.sessionId !== sessionId) return;
      if (message.method === 'Network.requestWillBeSent') {
        page.requests.push(message.params.request.url);
      } else if (message.method === 'Runtime.exceptionThrown') {
        onScriptError(`script error in the page: ${JSON.stringify(message.params.exceptionDetails)}`);
      }
    });
    await page.send('Page.enable');
    await page.send('Runtime.enable');
    await page.send('Network.enable');
    await page.send('Emulation.setDeviceMetricsOverride',
                    { width, height, deviceScaleFactor: 1, mobile: false });
    return page;
  }
  constructor(browser, sessionId) {
    this.browser = browser;
    this.sessionId = sessionId;
  }
  send(method, params) { return this.browser.send(method, params, this.sessionId); }
  async navigate(url) {
    const loaded = this.browser.waitFor(
      (m) => m.sessionId === this.sessionId && m.method === 'Page.loadEventFired', 60000, 'load');
    const started = Date.now();
    await this.send('Page.navigate', { url });
    await loaded;
    await this.until('window.flamegraph !== undefined', 60000);
    return Date.now() - started;
  }
  async evaluate(expression) {
    const result = await this.send('Runtime.evaluate', { expression, returnByValue: true });
    if (result.exceptionDetails) {
      throw new Error(`${expression}: ${JSON.stringify(result.exceptionDetails)}`);
    }
    return result.result.value;
  }
  async until(expression, timeoutMs) {
    const end = Date.now() + timeoutMs;
    while (!(await this.evaluate(expression))) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${expression}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  async mouse(type, x, y, extra = {}) {
    await this.send('Input.dispatchMouseEvent', { type, x, y, ...extra });
  }
  async click(x, y) {
    await this.mouse('mouseMoved', x, y);
    await this.mouse('mousePressed', x, y, { button: 'left', clickCount: 1 });
    await this.mouse('mouseReleased', x, y, { button: 'left', clickCount: 1 });
  }
  async clickElement(selector) {
    const r = await this.evaluate(`(() => { const r = document.querySelector(${JSON.stringify(selector)})` +
                                  '.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()');
    await this.click(r[0] + r[2] / 2, r[1] + r[3] / 2);
  }
  // A graph taller than the window has frames outside it (the root is at the bottom), where a
  // click lands on nothing: scroll the frame to the window's middle first, as a user would, and
  // click it where it then is, `dx` pixels from its left edge (default its middle).
  async clickFrame(node, dx = undefined) {
    const find = async () => (await this.frames()).find((f) => f.node === node);
    const before = await find();
    if (!before) throw new Error(`no frame of node ${node} is drawn`);
    await this.evaluate(`window.scrollBy(0, ${before.y + before.height / 2} - window.innerHeight / 2)`);
    const frame = await find();
    await this.click(frame.x + (dx === undefined ? frame.width / 2 : dx), frame.y + frame.height / 2);
  }
  frames() { return this.evaluate('window.flamegraph.frames()'); }
  state() { return this.evaluate('window.flamegraph.state()'); }
}

module.exports = { findChromium, Browser, Page };
