'use strict';
// The flame graph page: draws one event's call tree on a canvas from the data object the writer
// embeds (src/report/flamegraph_writer.hpp describes it). Frames narrower than MIN_FRAME_PX are not
// drawn, nor is anything under them, so a tree of a million nodes draws what a screen can show.
(function () {
  const data = JSON.parse(document.getElementById('flamegraph-data').textContent);
  const FRAME_HEIGHT = 18;
  const MIN_FRAME_PX = 0.5;
  const KIND_USER = 0, KIND_KERNEL = 1, KIND_UNKNOWN = 2, KIND_COMMAND = 3, KIND_ROOT = 4;
  const KIND_NAMES = ['user', 'kernel', 'JIT or unknown', 'command', 'all samples'];

  const frameNames = data.frames.name.map((i) => data.strings[i]);
  const frameDsos = data.frames.dso;
  const frameKinds = data.frames.kind;

  // A column of numbers as the writer encodes it: base-32 digits, most significant first, those
  // with more to follow from the upper half of the alphabet.
  const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_';
  const digitValue = new Int8Array(128).fill(-1);
  for (let d = 0; d < DIGITS.length; ++d) digitValue[DIGITS.charCodeAt(d)] = d;
  function decodeColumn(text, count) {
    const values = new Float64Array(count);
    let n = 0, value = 0;
    for (let i = 0; i < text.length; ++i) {
      const d = digitValue[text.charCodeAt(i)];
      if (d >= 32) {
        value = value * 32 + (d - 32);
      } else {
        values[n++] = value * 32 + d;
        value = 0;
      }
    }
    return values.subarray(0, n);
  }

  // A mostly-zero column: (zeros skipped, value) pairs.
  function decodeSparseColumn(text, count) {
    const pairs = decodeColumn(text, text.length);
    const values = new Float64Array(count);
    let at = 0;
    for (let k = 0; k + 1 < pairs.length; k += 2) {
      at += pairs[k];
      values[at++] = pairs[k + 1];
    }
    return values;
  }

  const $ = (id) => document.getElementById(id);
  const canvas = $('canvas');
  const context = canvas.getContext('2d');
  const tooltip = $('tooltip');

  // A tree in pre-order as typed arrays: frame, depth, parent, end (one past the subtree), self and
  // total samples and period (in period units), x (the period left of it under the root); for a
  // diff the same of the base profile.
  function makeTree(frame, depth, columns) {
    const n = frame.length;
    const parent = new Int32Array(n);
    const end = new Int32Array(n);
    const path = [];
    let maxDepth = 0;
    for (let i = 0; i < n; ++i) {
      const d = depth[i];
      while (path.length > d) end[path.pop()] = i;
      parent[i] = d === 0 ? -1 : path[d - 1];
      path.push(i);
      if (d > maxDepth) maxDepth = d;
    }
    while (path.length > 0) end[path.pop()] = n;
    const tree = { n, frame, depth, parent, end, maxDepth };
    for (const [name, self] of Object.entries(columns)) {
      const total = Float64Array.from(self);
      for (let i = n - 1; i > 0; --i) total[parent[i]] += total[i];
      tree[name] = total;
    }
    const x = new Float64Array(n);
    const next = new Float64Array(n);
    for (let i = 1; i < n; ++i) {
      const p = parent[i];
      x[i] = next[p];
      next[p] += tree.period[i];
      next[i] = x[i];
    }
    tree.x = x;
    return tree;
  }

  // The tree as the writer sent it: caller-first, depth from the ascend column.
  function callerTree(event) {
    const n = event.nodes;
    const frame = Int32Array.from(decodeColumn(event.frame, n));
    const ascend = decodeSparseColumn(event.ascend, n);
    const depth = new Int32Array(n);
    for (let i = 1; i < n; ++i) depth[i] = depth[i - 1] + 1 - ascend[i];
    const columns = {
      samples: decodeSparseColumn(event.selfSamples, n),
      period: decodeSparseColumn(event.selfPeriod, n),
    };
    if (data.diff) {
      columns.baseSamples = decodeSparseColumn(event.baseSelfSamples, n);
      columns.basePeriod = decodeSparseColumn(event.baseSelfPeriod, n);
    }
    return makeTree(frame, depth, columns);
  }

  // The callee-first tree: every node's own samples inserted leaf-first along its path of
  // callers, children ordered as the writer orders them (by period, then name). Children are found
  // by a scan of a sibling list, or by a map once a node has many (a root of many leaves).
  function calleeTree(caller) {
    const selfOf = selfColumns(caller);
    const columnNames = Object.keys(selfOf);
    let capacity = 1;
    for (let i = 1; i < caller.n; ++i) if (selfOf.period[i] !== 0 || selfOf.samples[i] !== 0 ||
      (selfOf.basePeriod && (selfOf.basePeriod[i] !== 0 || selfOf.baseSamples[i] !== 0))) {
      capacity += caller.depth[i];
    }
    const frame = new Int32Array(capacity);
    const parent = new Int32Array(capacity).fill(-1);
    const firstChild = new Int32Array(capacity).fill(-1);
    const nextSibling = new Int32Array(capacity).fill(-1);
    const childCount = new Int32Array(capacity);
    const childMaps = new Map();
    const self = {};
    for (const name of columnNames) self[name] = new Float64Array(capacity);
    let count = 1;
    const childOf = (node, f) => {
      const map = childMaps.get(node);
      if (map) {
        const found = map.get(f);
        if (found !== undefined) return found;
      } else {
        for (let c = firstChild[node]; c >= 0; c = nextSibling[c]) if (frame[c] === f) return c;
      }
      const child = count++;
      frame[child] = f;
      parent[child] = node;
      nextSibling[child] = firstChild[node];
      firstChild[node] = child;
      if (++childCount[node] === 16) {
        const made = new Map();
        for (let c = firstChild[node]; c >= 0; c = nextSibling[c]) made.set(frame[c], c);
        childMaps.set(node, made);
      } else if (map) {
        map.set(f, child);
      }
      return child;
    };
    for (let i = 1; i < caller.n; ++i) {
      let any = false;
      for (const name of columnNames) if (selfOf[name][i] !== 0) any = true;
      if (!any) continue;
      let node = 0;
      for (let c = i; c > 0; c = caller.parent[c]) node = childOf(node, caller.frame[c]);
      for (const name of columnNames) self[name][node] += selfOf[name][i];
    }
    // Totals to order children by, then a pre-order walk.
    const total = self.period.slice(0, count);
    const baseTotal = self.basePeriod ? self.basePeriod.slice(0, count) : null;
    for (let i = count - 1; i > 0; --i) {
      total[parent[i]] += total[i];
      if (baseTotal) baseTotal[parent[i]] += baseTotal[i];
    }
    const byOrder = (a, b) => total[b] - total[a] || (baseTotal ? baseTotal[b] - baseTotal[a] : 0) ||
      (frameNames[frame[a]] < frameNames[frame[b]] ? -1 : 1);
    const order = new Int32Array(count);
    const depth = new Int32Array(count);
    const pendingNode = new Int32Array(count);
    const pendingDepth = new Int32Array(count);
    let pending = 1, emitted = 0;
    const children = [];
    while (pending > 0) {
      --pending;
      const node = pendingNode[pending];
      order[emitted] = node;
      depth[emitted++] = pendingDepth[pending];
      children.length = 0;
      for (let c = firstChild[node]; c >= 0; c = nextSibling[c]) children.push(c);
      if (children.length > 1) children.sort(byOrder);
      for (let k = children.length - 1; k >= 0; --k) {
        pendingNode[pending] = children[k];
        pendingDepth[pending++] = depth[emitted - 1] + 1;
      }
    }
    const columns = {};
    for (const name of columnNames) columns[name] = Float64Array.from(order, (node) => self[name][node]);
    return makeTree(Int32Array.from(order, (node) => frame[node]), depth, columns);
  }

  // Each column's own (not total) values, recovered from the totals.
  function selfColumns(tree) {
    const result = {};
    for (const name of ['samples', 'period', 'baseSamples', 'basePeriod']) {
      if (!tree[name]) continue;
      const self = Float64Array.from(tree[name]);
      for (let i = 1; i < tree.n; ++i) self[tree.parent[i]] -= tree[name][i];
      result[name] = self;
    }
    return result;
  }

  // --- colors -------------------------------------------------------------------------------------

  function hash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; ++i) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return (h >>> 0) / 4294967296;
  }

  // Per kind: user code warm reds, kernel orange, JIT or unknown green, commands grey-blue.
  function kindColor(kind, name) {
    const v = hash(name);
    switch (kind) {
      case KIND_USER: return `hsl(${Math.round(v * 22)},72%,${58 + Math.round(v * 8)}%)`;
      case KIND_KERNEL: return `hsl(${30 + Math.round(v * 14)},85%,${55 + Math.round(v * 8)}%)`;
      case KIND_UNKNOWN: return `hsl(${95 + Math.round(v * 35)},50%,${55 + Math.round(v * 10)}%)`;
      case KIND_COMMAND: return 'hsl(210,22%,72%)';
      default: return 'hsl(0,0%,80%)';
    }
  }
  // Per shared object: one hue each, the function varying the lightness a little.
  function dsoColor(frame) {
    const dso = frameDsos[frame];
    if (dso < 0) return kindColor(frameKinds[frame], frameNames[frame]);
    const hue = Math.round(hash(data.dsos[dso]) * 360);
    return `hsl(${hue},60%,${58 + Math.round(hash(frameNames[frame]) * 14)}%)`;
  }
  function frameColors(mode) {
    return frameNames.map((name, frame) =>
      mode === 'dso' ? dsoColor(frame) : kindColor(frameKinds[frame], name));
  }
  // A diff: light grey for no change (white would vanish into the page), red as the share grew,
  // blue as it shrank (full color at the largest change in the view).
  function diffColor(delta, largest) {
    if (largest <= 0 || delta === 0) return 'rgb(236,236,236)';
    const k = Math.min(1, Math.abs(delta) / largest);
    const other = Math.round(236 - 176 * k);
    return delta > 0 ? `rgb(250,${other},${other})` : `rgb(${other},${other},250)`;
  }
  const MATCH_COLOR = 'rgb(230,0,230)';

  // --- formatting ---------------------------------------------------------------------------------

  const formatCount = (n) => Math.round(n).toLocaleString('en-US');
  const formatPercent = (part, whole) => (whole > 0 ? (100 * part / whole).toFixed(2) : '0.00') + '%';
  function formatPeriod(event, units, unit) {
    const value = units * unit;
    if (!event.time) return formatCount(value) + ' events';
    if (value >= 1e9) return (value / 1e9).toFixed(3) + ' s';
    if (value >= 1e6) return (value / 1e6).toFixed(3) + ' ms';
    if (value >= 1e3) return (value / 1e3).toFixed(3) + ' µs';
    return value + ' ns';
  }
  const escapeHtml = (text) => text.replace(/[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

  // --- state --------------------------------------------------------------------------------------

  const state = {
    event: 0,
    reverse: false,
    focus: 0,
    colorMode: 'kind',
    regex: null,
    matchedShare: null,
    trees: data.events.map(() => ({ caller: null, callee: null })),
  };
  let colors = frameColors(state.colorMode);
  let matchedFrames = null;  // Uint8Array per frame, when searching
  // What the last draw put on the canvas, for hit tests: node, x, width per depth, by x.
  let drawn = [];

  function currentEvent() { return data.events[state.event]; }
  function currentTree() {
    const trees = state.trees[state.event];
    if (!trees.caller) trees.caller = callerTree(currentEvent());
    if (!state.reverse) return trees.caller;
    if (!trees.callee) trees.callee = calleeTree(trees.caller);
    return trees.callee;
  }

  // Share of the samples' period with a matching frame anywhere in their stack: the outermost
  // matching frames' totals (a match under a match is not counted twice).
  function matchedShare(tree) {
    let matched = 0;
    for (let i = 0; i < tree.n;) {
      if (matchedFrames[tree.frame[i]]) {
        matched += tree.period[i];
        i = tree.end[i];
      } else {
        ++i;
      }
    }
    return tree.period[0] > 0 ? 100 * matched / tree.period[0] : 0;
  }

  function applySearch() {
    const input = $('search');
    const text = input.value;
    input.classList.remove('invalid');
    state.regex = null;
    matchedFrames = null;
    state.matchedShare = null;
    $('matched').textContent = '';
    if (text !== '') {
      try {
        state.regex = new RegExp(text);
      } catch (e) {
        input.classList.add('invalid');
        $('matched').textContent = 'invalid regular expression';
      }
    }
    if (state.regex) {
      matchedFrames = Uint8Array.from(frameNames, (name) => (state.regex.test(name) ? 1 : 0));
      state.matchedShare = matchedShare(currentTree());
      $('matched').textContent = `Matched: ${state.matchedShare.toFixed(2)}% of total`;
    }
    draw();
  }

  // --- drawing ------------------------------------------------------------------------------------

  function draw() {
    const tree = currentTree();
    const event = currentEvent();
    const width = Math.max(200, $('chart').clientWidth - 20);
    const height = (tree.maxDepth + 1) * FRAME_HEIGHT;
    const ratio = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
      canvas.style.width = width + 'px';
      canvas.style.height = height + 'px';
    }
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    context.font = '12px Verdana, "DejaVu Sans", sans-serif';
    context.textBaseline = 'middle';
    const charWidth = context.measureText('abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJ').width / 36;

    const focus = state.focus;
    const left = tree.x[focus];
    const scale = tree.period[focus] > 0 ? width / tree.period[focus] : 0;
    const yOf = (depth) => (state.reverse ? depth * FRAME_HEIGHT : height - (depth + 1) * FRAME_HEIGHT);
    let largestDelta = 0;
    const delta = (i) => (data.diff
      ? 100 * (tree.period[i] / Math.max(1, tree.period[0]) -
               tree.basePeriod[i] / Math.max(1, tree.basePeriod[0]))
      : 0);
    drawn = [];
    for (let d = 0; d <= tree.maxDepth; ++d) drawn.push({ node: [], x: [], width: [] });

    const nodes = [];
    // The focus's callers span the whole width, dimmed; then the focus's subtree.
    for (let a = tree.parent[focus]; a >= 0; a = tree.parent[a]) nodes.push(a);
    const ancestors = nodes.length;
    for (let i = focus; i < tree.end[focus];) {
      if (tree.period[i] * scale < MIN_FRAME_PX) {
        i = tree.end[i];
        continue;
      }
      nodes.push(i);
      ++i;
    }
    if (data.diff) for (const i of nodes) largestDelta = Math.max(largestDelta, Math.abs(delta(i)));
    for (let k = 0; k < nodes.length; ++k) {
      const i = nodes[k];
      const dimmed = k < ancestors;
      const x = dimmed ? 0 : (tree.x[i] - left) * scale;
      const w = dimmed ? width : tree.period[i] * scale;
      const y = yOf(tree.depth[i]);
      const frame = tree.frame[i];
      let fill;
      if (matchedFrames && matchedFrames[frame]) fill = MATCH_COLOR;
      else if (data.diff) fill = diffColor(delta(i), largestDelta);
      else fill = colors[frame];
      context.globalAlpha = dimmed ? 0.55 : 1;
      context.fillStyle = fill;
      context.fillRect(x, y, w > 2 ? w - 1 : w, FRAME_HEIGHT - 1);
      const level = drawn[tree.depth[i]];
      level.node.push(i);
      level.x.push(x);
      level.width.push(w);
      const chars = Math.floor((w - 6) / charWidth);
      if (chars >= 3) {
        const name = frameNames[frame];
        const label = name.length <= chars ? name : name.slice(0, chars - 2) + '..';
        context.fillStyle = fill === MATCH_COLOR ? '#fff' : '#000';
        context.fillText(label, x + 3, y + FRAME_HEIGHT / 2);
      }
    }
    context.globalAlpha = 1;

    const zoomed = focus !== 0 ? ` — zoomed into ${frameNames[tree.frame[focus]]} ` +
      `(${formatPercent(tree.period[focus], tree.period[0])} of total; click a dimmed frame or ` +
      'Reset zoom to go back)' : '';
    let summary = `${event.name}: ${formatCount(event.samples)} samples, ` +
      formatPeriod(event, event.period, 1);
    if (data.diff) {
      summary += ` (base: ${formatCount(event.baseSamples)} samples, ` +
        `${formatPeriod(event, event.basePeriod, 1)}); width: the new profile, color: change of ` +
        'share (red grew, blue shrank)';
    }
    $('info').textContent = summary + (state.reverse ? '; callee-first' : '') + zoomed;
    $('reset').disabled = focus === 0;
  }

  function drawLegend() {
    const legend = $('legend');
    const items = [];
    if (data.diff) {
      items.push(['rgb(250,60,60)', 'share grew'], ['rgb(236,236,236)', 'unchanged'],
                 ['rgb(60,60,250)', 'share shrank']);
    } else if (state.colorMode === 'kind') {
      for (const kind of [KIND_USER, KIND_KERNEL, KIND_UNKNOWN, KIND_COMMAND]) {
        items.push([kindColor(kind, ''), KIND_NAMES[kind]]);
      }
    } else {
      // The shared objects of this event by the period they hold, the largest first.
      const tree = currentTree();
      const byDso = new Map();
      const self = selfColumns(tree).period;
      for (let i = 0; i < tree.n; ++i) {
        const dso = frameDsos[tree.frame[i]];
        if (dso >= 0) byDso.set(dso, (byDso.get(dso) || 0) + self[i]);
      }
      const dsos = [...byDso.keys()].sort((a, b) => byDso.get(b) - byDso.get(a)).slice(0, 24);
      for (const dso of dsos) {
        items.push([`hsl(${Math.round(hash(data.dsos[dso]) * 360)},60%,64%)`, data.dsos[dso]]);
      }
    }
    items.push([MATCH_COLOR, 'search match']);
    legend.innerHTML = items.map(([color, text]) =>
      `<span><span class="swatch" style="background:${color}"></span>${escapeHtml(text)}</span>`)
      .join('');
  }

  // --- interaction --------------------------------------------------------------------------------

  // The node under a point of the canvas (CSS pixels), or -1.
  function hit(px, py) {
    const tree = currentTree();
    const height = (tree.maxDepth + 1) * FRAME_HEIGHT;
    const depth = state.reverse ? Math.floor(py / FRAME_HEIGHT)
                                : Math.floor((height - py) / FRAME_HEIGHT);
    if (depth < 0 || depth >= drawn.length) return -1;
    const level = drawn[depth];
    // Frames of one depth are drawn left to right, callers (full width) first.
    let lo = 0, hi = level.node.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (level.x[mid] <= px) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0 || px >= level.x[found] + level.width[found]) return -1;
    return level.node[found];
  }

  function pointerNode(e) {
    const rect = canvas.getBoundingClientRect();
    return hit(e.clientX - rect.left, e.clientY - rect.top);
  }

  function describe(i) {
    const tree = currentTree();
    const event = currentEvent();
    const frame = tree.frame[i];
    const dso = frameDsos[frame];
    const lines = [`<b>${escapeHtml(frameNames[frame])}</b>`];
    lines.push(escapeHtml((dso >= 0 ? data.dsos[dso] + ' · ' : '') + KIND_NAMES[frameKinds[frame]]));
    lines.push(`samples: ${formatCount(tree.samples[i])} (${formatPercent(tree.samples[i], tree.samples[0])})`);
    lines.push(`period: ${formatPeriod(event, tree.period[i], event.periodUnit)} ` +
               `(${formatPercent(tree.period[i], tree.period[0])} of total)`);
    if (state.focus !== 0) {
      lines.push(`${formatPercent(tree.period[i], tree.period[state.focus])} of the zoomed frame`);
    }
    if (data.diff) {
      const after = 100 * tree.period[i] / Math.max(1, tree.period[0]);
      const before = 100 * tree.basePeriod[i] / Math.max(1, tree.basePeriod[0]);
      const change = after - before;
      lines.push(`base: ${before.toFixed(2)}% (${formatCount(tree.baseSamples[i])} samples) → ` +
                 `new: ${after.toFixed(2)}% (${formatCount(tree.samples[i])} samples)`);
      lines.push(`change: ${change >= 0 ? '+' : ''}${change.toFixed(2)} points`);
    }
    return lines.join('\n');
  }

  canvas.addEventListener('mousemove', (e) => {
    const i = pointerNode(e);
    if (i < 0) {
      tooltip.hidden = true;
      return;
    }
    tooltip.innerHTML = describe(i);
    tooltip.hidden = false;
    const x = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 4);
    const y = e.clientY + 18 + tooltip.offsetHeight > window.innerHeight
      ? e.clientY - tooltip.offsetHeight - 8 : e.clientY + 18;
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = Math.max(0, y) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tooltip.hidden = true; });
  canvas.addEventListener('click', (e) => {
    const i = pointerNode(e);
    if (i < 0) return;
    state.focus = i;
    tooltip.hidden = true;
    draw();
  });
  $('reset').addEventListener('click', () => {
    state.focus = 0;
    draw();
  });
  $('reverse').addEventListener('click', () => {
    state.reverse = !state.reverse;
    state.focus = 0;
    $('reverse').setAttribute('aria-pressed', String(state.reverse));
    applySearch();
  });
  $('color').addEventListener('change', () => {
    state.colorMode = $('color').value;
    colors = frameColors(state.colorMode);
    drawLegend();
    draw();
  });
  $('event').addEventListener('change', () => {
    state.event = Number($('event').value);
    state.focus = 0;
    drawLegend();
    applySearch();
  });
  $('search').addEventListener('input', applySearch);
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
      e.preventDefault();
      $('search').focus();
      $('search').select();
    } else if (e.key === 'Escape' && document.activeElement !== $('search')) {
      state.focus = 0;
      draw();
    }
  });
  let resizing = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(draw);
  });

  // --- start --------------------------------------------------------------------------------------

  document.title = data.title + (data.subtitle ? ' — ' + data.subtitle : '');
  $('title').textContent = data.title;
  $('subtitle').textContent = data.subtitle;
  if (data.diff) $('color-choice').hidden = true;
  if (data.events.length > 1) {
    $('event-choice').hidden = false;
    data.events.forEach((event, i) => {
      const option = document.createElement('option');
      option.value = String(i);
      option.textContent = `${event.name} (${formatCount(event.samples)} samples)`;
      $('event').appendChild(option);
    });
  }
  if (data.events.length === 0) {
    $('info').textContent = 'No samples in this profile.';
  } else {
    drawLegend();
    draw();
  }

  // For tests and scripts: what is drawn, in viewport (CSS pixel) coordinates.
  window.flamegraph = {
    renderMs: performance.now(),
    state: () => ({
      event: state.event, reverse: state.reverse, focus: state.focus,
      matchedShare: state.matchedShare, nodes: currentTree().n,
    }),
    frames: () => {
      const tree = currentTree();
      const rect = canvas.getBoundingClientRect();
      const result = [];
      drawn.forEach((level, depth) => level.node.forEach((i, k) => {
        const frame = tree.frame[i];
        result.push({
          node: i, depth, parent: tree.parent[i], name: frameNames[frame],
          dso: frameDsos[frame] >= 0 ? data.dsos[frameDsos[frame]] : '',
          x: rect.left + level.x[k], width: level.width[k],
          y: rect.top + (state.reverse ? depth * FRAME_HEIGHT
            : canvas.clientHeight - (depth + 1) * FRAME_HEIGHT),
          height: FRAME_HEIGHT - 1, canvasLeft: rect.left, canvasWidth: rect.width,
        });
      }));
      return result;
    },
  };
})();
