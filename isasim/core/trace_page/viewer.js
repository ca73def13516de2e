// isasim's trace viewer: rebuilds the state of any step of a run from the model embedded in the page
// (isasim/core/trace_page/model.py describes it) and shows it as grids.  No network, no libraries.
(function () {
  "use strict";
  var source = document.getElementById("isasim-model");
  var root = document.getElementById("isasim-viewer");
  if (!source || !root) return;
  var model = JSON.parse(source.textContent);
  var steps = model.steps;
  var N = steps.length;
  var SNAPSHOT_EVERY = 256; // a jump to step k applies at most this many steps after a kept snapshot
  var MAX_ROWS = 32; // rows of a panel shown at once (a 512 KiB buffer is shown a window at a time)
  var ELEMENT_SIZE = {int8: 1, uint8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8,
                      bf16: 2, fp16: 2, fp32: 4};

  // ---- bytes ------------------------------------------------------------------------------------------
  function hexBytes(hex, size) {
    var out = new Uint8Array(size === undefined ? hex.length / 2 : size);
    for (var i = 0, j = 0; j < hex.length; i++, j += 2) out[i] = parseInt(hex.substr(j, 2), 16);
    return out;
  }

  // ---- the state of a step: panels by name, copied on write so that snapshots can share bytes ---------
  function panelEntry(def) { return {def: def, data: hexBytes(def.data, def.size)}; }

  function initialState() {
    var panels = new Map();
    model.initial.panels.forEach(function (def) { panels.set(def.name, panelEntry(def)); });
    return {panels: panels, owned: new Set(panels.keys()), t: 0};
  }

  function applyStep(state, step) {
    (step.removed || []).forEach(function (name) { state.panels.delete(name); });
    (step.panels || []).forEach(function (def) {
      state.panels.set(def.name, panelEntry(def));
      state.owned.add(def.name);
    });
    step.patches.forEach(function (patch) {
      var name = patch[0], entry = state.panels.get(name);
      if (!entry) return;
      if (!state.owned.has(name)) {
        entry = {def: entry.def, data: entry.data.slice()};
        state.panels.set(name, entry);
        state.owned.add(name);
      }
      var bytes = hexBytes(patch[2]);
      entry.data.set(bytes, patch[1]);
    });
    state.t += 1;
  }

  function snapshotOf(state) {
    state.owned = new Set(); // from now on the snapshot and the state share every panel's bytes
    return {panels: new Map(state.panels), t: state.t};
  }

  function stateFrom(snapshot) { return {panels: new Map(snapshot.panels), owned: new Set(), t: snapshot.t}; }

  var snapshots = [];
  var current = initialState();
  snapshots[0] = snapshotOf(current);

  function advance(state) {
    applyStep(state, steps[state.t]);
    if (state.t % SNAPSHOT_EVERY === 0 && !snapshots[state.t / SNAPSHOT_EVERY]) {
      snapshots[state.t / SNAPSHOT_EVERY] = snapshotOf(state);
    }
  }

  function stateAt(t) {
    if (t === current.t) return current;
    if (t > current.t && t - current.t <= SNAPSHOT_EVERY) {
      while (current.t < t) advance(current);
      return current;
    }
    var k = Math.floor(t / SNAPSHOT_EVERY);
    while (k > 0 && !snapshots[k]) k--;
    var state = stateFrom(snapshots[k]);
    while (state.t < t) advance(state);
    return state;
  }

  // ---- numbers ------------------------------------------------------------------------------------------
  var scratch = new DataView(new ArrayBuffer(8));
  function fp16Value(bits) {
    var sign = bits & 0x8000 ? -1 : 1, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
    if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
    if (exponent === 0) return sign * fraction * Math.pow(2, -24);
    return sign * (1024 + fraction) * Math.pow(2, exponent - 25);
  }
  function bf16Value(bits) { scratch.setUint32(0, bits << 16 >>> 0); return scratch.getFloat32(0); }
  function fp32Value(bits) { scratch.setUint32(0, bits >>> 0); return scratch.getFloat32(0); }
  var FLOAT = {fp16: {fraction: 10, minExponent: -14}, bf16: {fraction: 7, minExponent: -126},
               fp32: {fraction: 23, minExponent: -126}};
  // The shortest decimal that reads back as the same value of the format (the exact value is a double).
  function floatText(value, type) {
    if (isNaN(value)) return "NaN";
    if (!isFinite(value)) return value > 0 ? "inf" : "-inf";
    if (value === 0) return 1 / value < 0 ? "-0" : "0";
    var f = FLOAT[type];
    var exponent = Math.max(Math.floor(Math.log2(Math.abs(value))), f.minExponent);
    var halfUlp = Math.pow(2, exponent - f.fraction - 1);
    for (var digits = 1; digits < 17; digits++) {
      var text = value.toPrecision(digits);
      if (Math.abs(Number(text) - value) < halfUlp) return String(Number(text));
    }
    return String(value);
  }
  function hexText(view, offset, size) {
    var text = "";
    for (var i = size - 1; i >= 0; i--) text += (view.getUint8(offset + i) + 0x100).toString(16).slice(1);
    return text;
  }
  // [text, magnitude for the heat map]
  function element(view, offset, type, hexSize) {
    switch (type) {
      case "int8": var a = view.getInt8(offset); return [String(a), a];
      case "uint8": var b = view.getUint8(offset); return [String(b), b];
      case "int16": var c = view.getInt16(offset, true); return [String(c), c];
      case "uint16": var d = view.getUint16(offset, true); return [String(d), d];
      case "int32": var e = view.getInt32(offset, true); return [String(e), e];
      case "uint32": var f = view.getUint32(offset, true); return [String(f), f];
      case "int64": var g = view.getBigInt64(offset, true); return [g.toString(), Number(g)];
      case "uint64": var h = view.getBigUint64(offset, true); return [h.toString(), Number(h)];
      case "bf16": var i = bf16Value(view.getUint16(offset, true)); return [floatText(i, "bf16"), i];
      case "fp16": var j = fp16Value(view.getUint16(offset, true)); return [floatText(j, "fp16"), j];
      case "fp32": var k = fp32Value(view.getUint32(offset, true)); return [floatText(k, "fp32"), k];
      default: var x = hexText(view, offset, hexSize); return ["0x" + x, parseInt(x.slice(0, 13), 16)];
    }
  }

  // A cell read as its named bit fields (model view "fields": a quant word's M1, N, offset, sign):
  // [text, magnitude of the first field for the heat map]
  function fieldsElement(view, offset, fields, size) {
    var word = 0n;
    for (var i = size - 1; i >= 0; i--) word = (word << 8n) | BigInt(view.getUint8(offset + i));
    var parts = [], first = 0;
    fields.forEach(function (field, n) {
      var raw = (word >> BigInt(field.first_bit)) & ((1n << BigInt(field.width)) - 1n);
      var value, text;
      if (field.kind === "float_top") {
        value = fp32Value(Number(raw << BigInt(32 - field.width)));
        text = floatText(value, "fp32");
      } else {
        if (field.kind === "signed" && (raw >> BigInt(field.width - 1))) raw -= 1n << BigInt(field.width);
        value = Number(raw) + field.add;
        text = String(value);
      }
      if (n === 0) first = value;
      parts.push(field.name + "=" + text);
    });
    return [parts.join(" "), first];
  }

  // A colour-blind safe sequential palette (viridis' stops), dark for small magnitudes, light for large.
  var PALETTE = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58",
                 "#b5de2b", "#fde725"];
  function heatColour(fraction) {
    var i = Math.min(PALETTE.length - 1, Math.max(0, Math.floor(fraction * PALETTE.length)));
    return [PALETTE[i], i >= 5 ? "#000" : "#fff"];
  }

  // ---- the page ---------------------------------------------------------------------------------------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "className") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  var ui = {t: 0, types: {}, windows: {}, heat: false, breakpoints: new Set(), userClosed: new Set(),
            userOpened: new Set()};

  var header = el("header", {className: "iv-header"}, [
    el("h1", {text: model.title || "isasim trace"}),
    el("p", {className: "iv-sub", text: model.isa + " · " + (model.config_title || "") + " · " + N +
             " step" + (N === 1 ? "" : "s") + (model.end && model.end.halted ? ", ran to its end" : "")})
  ]);
  var truncated = model.truncated ? el("div", {className: "iv-banner iv-truncated", "data-testid": "truncated",
                                               role: "status", text: "Cut short: " + model.truncated}) : null;
  var workingsCut = model.workings_truncated ? el("div", {className: "iv-banner iv-truncated",
                                                         "data-testid": "workings-truncated", role: "status",
                                                         text: model.workings_truncated}) : null;
  var viewsBroken = model.views_error ? el("div", {className: "iv-banner iv-truncated", "data-testid": "views-error",
                                                   role: "status", text: "The views of " + model.isa + "'s arrays " +
                                                   "could not be made: " + model.views_error}) : null;
  var faultBanner = el("div", {className: "iv-banner iv-fault", "data-testid": "fault", role: "alert", hidden: ""});

  function button(label, testid, title, onClick) {
    var b = el("button", {type: "button", "data-testid": testid, title: title, text: label});
    b.addEventListener("click", onClick);
    return b;
  }
  var first = button("|◀ first", "step-first", "first state (Home)", function () { go(0); });
  var back = button("◀ back", "step-back", "one step back (ArrowLeft or k)", function () { go(ui.t - 1); });
  var forward = button("step ▶", "step-forward", "one step forward (ArrowRight or j)", function () { go(ui.t + 1); });
  var last = button("last ▶|", "step-last", "state after the last step (End)", function () { go(N); });
  var run = button("run ▶▶", "run", "run to the next step that runs a marked line (or to the end)", runToBreakpoint);
  var print = button("print this step", "print", "a printable picture of this step", function () { window.print(); });
  var slider = el("input", {type: "range", min: "0", max: String(N), value: "0", step: "1",
                            "data-testid": "slider", "aria-label": "step"});
  slider.addEventListener("input", function () { go(Number(slider.value)); });
  var stepNumber = el("span", {"data-testid": "step-number", className: "iv-step-number", text: "0"});
  var heat = el("input", {type: "checkbox", id: "iv-heat", "data-testid": "heatmap"});
  heat.addEventListener("change", function () { ui.heat = heat.checked; render(); });
  var status = el("p", {className: "iv-status", "aria-live": "polite"});
  var controls = el("div", {className: "iv-controls", role: "toolbar", "aria-label": "stepping"}, [
    first, back, forward, last, run,
    el("label", {className: "iv-slider"}, [el("span", {text: "step "}), slider]),
    el("span", {className: "iv-count"}, [stepNumber, el("span", {text: " / " + N + " steps run"})]),
    el("label", {className: "iv-heat-label"}, [heat, el("span", {text: " heat map"})]),
    print
  ]);

  var legendHeat = el("span", {className: "iv-legend-heat", hidden: ""}, [
    el("span", {text: "small |value|"}),
    el("span", {className: "iv-gradient", style: "background: linear-gradient(to right, " + PALETTE.join(", ") + ")"}),
    el("span", {text: "large (per panel)"})
  ]);
  var hasOutlines = steps.some(function (step) { return step.outlines && step.outlines.length; });
  var operandsLine = el("p", {className: "iv-operands", "data-testid": "operands", hidden: ""});
  var legend = el("div", {className: "iv-legend"}, [
    el("span", {className: "iv-swatch written", text: "12"}), el("span", {text: " written by this step"}),
    model.workings ? el("span", {className: "iv-swatch written has-working", text: "12"}) : null,
    model.workings ? el("span", {text: " click for how it was computed"}) : null,
    hasOutlines ? el("span", {className: "iv-swatch operand operand-read", text: "12"}) : null,
    hasOutlines ? el("span", {text: " an operand of this step (its name in the cell's tooltip)"}) : null,
    el("span", {className: "iv-swatch iv-bp-swatch", text: "●"}), el("span", {text: " breakpoint"}),
    legendHeat
  ]);
  var help = el("details", {className: "iv-help"}, [
    el("summary", {text: "How to use this page"}),
    el("p", {text: "Step with the buttons, the slider or the keys: ArrowRight or j forward, ArrowLeft or k back, " +
             "Home and End for the first and last state. Click a line of the program (or press Enter on it) to " +
             "mark it; \"run\" then stops after the next step that runs a marked line. Each panel shows its " +
             "bytes in the type chosen beside it; cells the step just run changed are outlined. Large buffers " +
             "show " + MAX_ROWS + " rows at a time and follow the rows a step writes. " +
             ((model.views || []).length ? "Under a panel, its views (such as a tile of ZA, or L0C as the matrix " +
              "C) show the same bytes as the architecture arranges them: open one by its title. " : "") +
             "The page needs no network."}),
    el("p", {text: model.workings
      ? "Click a cell the step wrote (or press Enter on it) to see how it was computed from that step's data: " +
        "cells with a mark in their corner have an account; Esc closes it."
      : "This ISA gives no account of how an element was computed yet: use isasim explain."})
  ]);

  var listing = el("ol", {className: "iv-listing", "data-testid": "listing", "aria-label": "program"});
  var lines = model.listing.map(function (ins) {
    var line = el("li", {"data-index": String(ins.index), tabindex: "0", role: "button",
                         "aria-pressed": "false", title: "click to mark or unmark this line"}, [
      el("span", {className: "iv-addr", text: "0x" + ins.address.toString(16)}),
      ins.label ? el("span", {className: "iv-label", text: ins.label + ":"}) : null,
      el("code", {text: ins.text})
    ]);
    function toggle() {
      if (ui.breakpoints.has(ins.index)) ui.breakpoints.delete(ins.index); else ui.breakpoints.add(ins.index);
      line.classList.toggle("breakpoint", ui.breakpoints.has(ins.index));
      line.setAttribute("aria-pressed", String(ui.breakpoints.has(ins.index)));
    }
    line.addEventListener("click", toggle);
    line.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(); }
    });
    listing.appendChild(line);
    return line;
  });

  var groups = {registers: el("section", {className: "iv-group", "aria-label": "registers"}),
                arrays: el("section", {className: "iv-group", "aria-label": "arrays"}),
                memory: el("section", {className: "iv-group", "aria-label": "memory"})};
  var panelsBox = el("div", {className: "iv-panels"}, [
    el("h2", {text: "arrays"}), groups.arrays, el("h2", {text: "memory"}), groups.memory,
    el("h2", {text: "registers"}), groups.registers]);
  var layout = el("div", {className: "iv-layout"}, [
    el("div", {className: "iv-left"}, [el("h2", {text: "program"}), listing]), panelsBox]);
  // ---- how a written element was computed (the step's "workings", made by isasim's explain) ------------
  var workingTitle = el("h2", {id: "iv-working-title", "data-testid": "working-title"});
  var workingBody = el("div", {className: "iv-working-body", "data-testid": "working-body"});
  var workingClose = button("✕ close", "working-close", "close (Esc)", function () { closeWorking(true); });
  var workingBox = el("aside", {className: "iv-working", "data-testid": "working", role: "dialog",
                                "aria-labelledby": "iv-working-title", hidden: ""}, [
    el("div", {className: "iv-working-head"}, [workingTitle, workingClose]), workingBody]);
  var workingFrom = null; // {panel, offset} of the cell whose working is open, to give it focus back

  function workingsAt(t, panel, offset, size) {
    if (t < 1) return [];
    return (steps[t - 1].workings || []).filter(function (w) {
      return w.panel === panel && w.offset < offset + size && offset < w.offset + w.size;
    });
  }

  // Which bytes of a panel the accounts of step t cover, as a mask kept for the step being drawn: a cell asks
  // its bytes, not every account of the step (an Mmad has 1,200 of them, and a view draws as many cells).
  var explainedMasks = {t: -1, masks: new Map()};
  function explainedMask(t, panel, size) {
    if (explainedMasks.t !== t) explainedMasks = {t: t, masks: new Map()};
    var mask = explainedMasks.masks.get(panel);
    if (!mask) {
      mask = new Uint8Array(size);
      if (t >= 1) {
        (steps[t - 1].workings || []).forEach(function (w) {
          if (w.panel === panel) mask.fill(1, Math.max(0, w.offset), Math.min(size, w.offset + w.size));
        });
      }
      explainedMasks.masks.set(panel, mask);
    }
    return mask;
  }
  function isExplained(t, panel, panelSize, offset, size) {
    var mask = explainedMask(t, panel, panelSize);
    for (var i = offset; i < offset + size && i < panelSize; i++) if (mask[i]) return true;
    return false;
  }

  // A step's accounts are stored gzip-compressed (model.py's _pack): unpacked on first use, then kept.
  var unpacked = new Map();
  function workingsHtml(t) {
    if (!unpacked.has(t)) {
      var binary = atob(steps[t - 1].workings_html), bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      unpacked.set(t, new Response(stream).text().then(JSON.parse));
    }
    return unpacked.get(t);
  }

  function missingText(t) {
    var step = steps[t - 1];
    if (step.workings_error) return "isasim could not give the account of this step: " + step.workings_error;
    if (model.workings_until !== null && model.workings_until !== undefined && t - 1 >= model.workings_until) {
      return "Left out of this page: " + model.workings_truncated;
    }
    if (!model.workings) return "No account for this instruction yet: isasim gives none for " + model.isa +
      " elements (isasim explain describes the instruction).";
    return "No account for this instruction yet (isasim explain describes the instruction).";
  }

  var opened = 0; // which opening of the panel a late unpacking belongs to

  function openWorking(cell) {
    var panel = cell.closest("[data-panel]").dataset.panel;
    var offset = Number(cell.dataset.offset), size = Number(cell.dataset.size);
    var t = ui.t, found = workingsAt(t, panel, offset, size), ticket = ++opened;
    var inView = cell.closest("[data-view]");
    workingFrom = {panel: panel, offset: offset, size: size, view: inView ? inView.dataset.view : null};
    workingBody.replaceChildren();
    if (found.length) {
      workingTitle.textContent = found.map(function (w) { return w.title; }).join("; ");
      workingBody.appendChild(el("p", {className: "iv-working-wait", text: "unpacking…"}));
      workingsHtml(t).then(function (texts) {
        if (ticket !== opened) return;
        var all = steps[t - 1].workings;
        workingBody.replaceChildren();
        found.forEach(function (w) {
          var part = el("section", {className: "iv-working-part", "data-testid": "working-part"});
          if (found.length > 1) part.appendChild(el("h3", {text: w.title}));
          if (!w.equal) part.appendChild(el("p", {className: "iv-working-bad", text: "The account and the " +
                                                   "machine disagree here (see the last line)."}));
          var content = el("div");
          content.innerHTML = texts[all.indexOf(w)]; // made by isasim's html_block, which escapes its text
          part.appendChild(content);
          workingBody.appendChild(part);
        });
      }, function (error) {
        if (ticket === opened) workingBody.replaceChildren(el("p", {text: "The account could not be unpacked: " +
                                                                         error}));
      });
    } else {
      workingTitle.textContent = panel + ", byte " + offset + " (written by step " + ui.t + ")";
      workingBody.appendChild(el("p", {"data-testid": "working-none", text: missingText(ui.t)}));
      // What the page itself knows of it: the instruction, what its form does, and the bytes before and after
      var ins = model.listing[steps[ui.t - 1].instruction];
      workingBody.appendChild(el("p", {text: "Written by step " + ui.t + ": " + ins.text +
                                       (ins.summary ? " (" + ins.summary + ")" : "")}));
      workingBody.appendChild(el("p", {"data-testid": "working-bytes",
                                       text: "Its bytes, most significant first: " + bytesText(ui.t - 1) + " before, " +
                                             bytesText(ui.t) + " after."}));
    }
    workingBox.hidden = false;
    workingClose.focus();
  }

  // The hex of the clicked element's bytes after t steps, or a word saying the panel did not exist then.
  function bytesText(t) {
    var entry = stateAt(t).panels.get(workingFrom.panel);
    var end = workingFrom.offset + workingFrom.size;
    if (!entry || entry.data.length < end) return "(not held)";
    return hexText(new DataView(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength),
                   workingFrom.offset, workingFrom.size);
  }

  function closeWorking(refocus) {
    if (workingBox.hidden) return;
    opened++;
    workingBox.hidden = true;
    var from = workingFrom;
    workingFrom = null;
    if (refocus && from) {
      var box = from.view !== null ? '[data-view="' + CSS.escape(from.view) + '"]'
                                   : 'details.iv-panel[data-panel="' + CSS.escape(from.panel) + '"]';
      var cell = root.querySelector(box + ' td[data-offset="' + from.offset + '"]');
      if (cell) cell.focus();
    }
  }

  [header, truncated, workingsCut, viewsBroken, controls, status, operandsLine, faultBanner, legend, help, layout,
   workingBox].forEach(function (node) { if (node) root.appendChild(node); });

  // ---- panels -------------------------------------------------------------------------------------------
  var panelViews = new Map(); // name -> {box, details, select, windowInput, grid, def}

  function typesOf(def) {
    var types = def.elements.slice();
    if (types.indexOf("hex") < 0) types.push("hex");
    return types;
  }

  function panelView(def) {
    var view = panelViews.get(def.name);
    if (view && view.def === def) return view;
    if (view) view.box.remove();
    var select = el("select", {"data-testid": "type-" + def.name, "aria-label": def.title + " element type"});
    typesOf(def).forEach(function (type) { select.appendChild(el("option", {value: type, text: type})); });
    select.value = ui.types[def.name] && typesOf(def).indexOf(ui.types[def.name]) >= 0 ? ui.types[def.name]
                                                                                       : def.element;
    select.addEventListener("change", function () { ui.types[def.name] = select.value; render(); });
    var rows = Math.ceil(def.size / def.row_bytes);
    var windowInput = null;
    if (rows > MAX_ROWS) {
      windowInput = el("input", {type: "number", min: "0", max: String(rows - 1), value: "0",
                                 "data-testid": "rows-" + def.name, "aria-label": def.title + " first row shown"});
      windowInput.addEventListener("change", function () {
        ui.windows[def.name] = Math.max(0, Math.min(rows - 1, Number(windowInput.value) || 0));
        render();
      });
    }
    var where = def.address !== undefined ? " at 0x" + def.address.toString(16) : "";
    var summary = el("summary", {}, [
      el("span", {className: "iv-panel-title", text: def.title}),
      el("span", {className: "iv-panel-info", text: " " + def.size + " bytes" + where + ", rows of " +
                  def.row_bytes + " B"})
    ]);
    var tools = el("div", {className: "iv-panel-tools"}, [
      el("label", {}, [el("span", {text: "view as "}), select]),
      windowInput ? el("label", {}, [el("span", {text: " rows from "}), windowInput,
                                     el("span", {text: " of " + rows})]) : null
    ]);
    var grid = el("div", {className: "iv-grid-box"});
    var details = el("details", {className: "iv-panel", "data-testid": "panel-" + def.name,
                                 "data-panel": def.name}, [summary, tools, grid]);
    if (def.show || ui.userOpened.has(def.name)) details.open = true;
    details.addEventListener("toggle", function () {
      if (details.open) { ui.userOpened.add(def.name); ui.userClosed.delete(def.name); render(); }
      else { ui.userClosed.add(def.name); ui.userOpened.delete(def.name); }
    });
    // the panel's derived views (model.views: ZA's tiles, L0C as the Mmad's matrix) follow it in one box
    var box = el("div", {className: "iv-panel-box"}, [details]);
    (viewsOf.get(def.name) || []).forEach(function (v) { box.appendChild(derivedView(v).details); });
    view = {box: box, details: details, select: select, windowInput: windowInput, grid: grid, def: def};
    panelViews.set(def.name, view);
    (groups[def.group] || groups.arrays).appendChild(box);
    return view;
  }

  // ---- derived views: a matrix whose cells are elements of a panel's bytes (model.py's "views") -----------
  var viewsOf = new Map(); // panel name -> [model view]
  (model.views || []).forEach(function (v) {
    if (!viewsOf.has(v.panel)) viewsOf.set(v.panel, []);
    viewsOf.get(v.panel).push(v);
  });
  var derivedViews = new Map(); // view name -> {details, select, windowInput, grid, v}

  function viewOffset(v, r, c) {
    return v.offsets ? v.offsets[r * v.cols + c] : v.base + r * v.row_stride + c * v.col_stride;
  }

  function derivedView(v) {
    var known = derivedViews.get(v.name);
    if (known) return known;
    var key = "view:" + v.name;
    var types = v.elements.slice();
    if (types.indexOf("hex") < 0) types.push("hex");
    var select = el("select", {"data-testid": "view-type-" + v.name, "aria-label": v.name + " element type"});
    types.forEach(function (type) { select.appendChild(el("option", {value: type, text: type})); });
    select.value = v.fields ? "fields" : v.element;
    select.addEventListener("change", function () { ui.types[key] = select.value; render(); });
    var windowInput = null;
    if (v.rows > MAX_ROWS) {
      windowInput = el("input", {type: "number", min: "0", max: String(v.rows - 1), value: "0",
                                 "data-testid": "view-rows-" + v.name, "aria-label": v.name + " first row shown"});
      windowInput.addEventListener("change", function () {
        ui.windows[key] = Math.max(0, Math.min(v.rows - 1, Number(windowInput.value) || 0));
        render();
      });
    }
    var summary = el("summary", {}, [
      el("span", {className: "iv-panel-title", text: v.name}),
      el("span", {className: "iv-panel-info", text: " " + v.rows + " x " + v.cols + " of " + v.panel})
    ]);
    // a view of bit fields says what each field is: its bits and its meaning
    var fieldList = v.fields ? el("ul", {className: "iv-view-fields", "data-testid": "view-fields-" + v.name},
      v.fields.map(function (field) {
        var last = field.first_bit + field.width - 1;
        return el("li", {}, [el("code", {text: field.name}),
          el("span", {text: " bits " + (field.width > 1 ? last + ".." : "") + field.first_bit +
                      (field.kind === "signed" ? ", two's complement" : "") +
                      (field.kind === "float_top" ? ", the top " + field.width + " bits of a binary32" : "") +
                      (field.add ? ", shown plus " + field.add : "") + (field.note ? ": " + field.note : "")})]);
      })) : null;
    var tools = el("div", {className: "iv-panel-tools"}, [
      v.note ? el("p", {className: "iv-view-note", text: v.note}) : null,
      fieldList,
      el("label", {}, [el("span", {text: "view as "}), select]),
      windowInput ? el("label", {}, [el("span", {text: " rows from "}), windowInput,
                                     el("span", {text: " of " + v.rows})]) : null
    ]);
    var grid = el("div", {className: "iv-grid-box"});
    var details = el("details", {className: "iv-view", "data-testid": "view-" + v.name, "data-panel": v.panel,
                                 "data-view": v.name}, [summary, tools, grid]);
    if (v.show) details.open = true;
    details.addEventListener("toggle", function () { if (details.open) render(); });
    known = {details: details, select: select, windowInput: windowInput, grid: grid, v: v};
    derivedViews.set(v.name, known);
    return known;
  }

  function renderDerived(entry, written, v, outlined) {
    var view = derivedView(v);
    if (!view.details.open) return;
    var key = "view:" + v.name, type = view.select.value;
    var size = ELEMENT_SIZE[v.element] || 1;
    var start = 0;
    if (v.rows > MAX_ROWS) {
      start = Math.min(ui.windows[key] || 0, v.rows - MAX_ROWS);
      view.windowInput.value = String(start);
    }
    var end = Math.min(v.rows, start + MAX_ROWS);
    var data = new DataView(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength);
    var head = el("tr", {}, [el("th", {scope: "col", text: "row"})]);
    for (var h = 0; h < v.cols; h++) head.appendChild(el("th", {scope: "col", text: String(h)}));
    var body = el("tbody"), cells = [], largest = 0;
    for (var r = start; r < end; r++) {
      var tr = el("tr", {}, [el("th", {scope: "row", text: String(r)})]);
      for (var c = 0; c < v.cols; c++) {
        var offset = viewOffset(v, r, c);
        var value = type === "fields" ? fieldsElement(data, offset, v.fields, size) : element(data, offset, type, size);
        var td = el("td", {"data-row": String(r), "data-col": String(c), "data-value": value[0],
                           "data-offset": String(offset), title: v.panel + " byte " + offset, text: value[0]});
        markOperand(td, outlined, offset, size);
        if (written && written.some(function (w) { return w[0] < offset + size && offset < w[1]; })) {
          var explained = isExplained(ui.t, v.panel, entry.def.size, offset, size);
          td.classList.add("written"); if (explained) td.classList.add("has-working");
          td.setAttribute("data-size", String(size));
          td.setAttribute("tabindex", "0");
          td.setAttribute("role", "button");
          td.title = (explained ? "click for how it was computed" : "written by this step (no account of it here)") +
                     operandNote(td);
        }
        var magnitude = Math.abs(value[1]);
        if (isFinite(magnitude) && magnitude > largest) largest = magnitude;
        cells.push([td, magnitude]);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    if (ui.heat && largest > 0) {
      cells.forEach(function (cell) {
        var colours = heatColour(cell[1] / largest);
        cell[0].style.background = colours[0];
        cell[0].style.color = colours[1];
      });
    }
    view.grid.replaceChildren(el("table", {className: "iv-grid"}, [el("thead", {}, [head]), body]));
  }

  function writtenRanges(t) {
    var ranges = new Map();
    if (t < 1) return ranges;
    steps[t - 1].patches.forEach(function (patch) {
      if (!ranges.has(patch[0])) ranges.set(patch[0], []);
      ranges.get(patch[0]).push([patch[1], patch[1] + patch[2].length / 2]);
    });
    return ranges;
  }

  // The array bytes the step's instruction addressed as operands (model steps' "outlines"): panel -> list
  function outlinesAt(t) {
    var found = new Map();
    if (t < 1) return found;
    (steps[t - 1].outlines || []).forEach(function (outline) {
      if (!found.has(outline.panel)) found.set(outline.panel, []);
      found.get(outline.panel).push(outline);
    });
    return found;
  }
  var ROLE_CLASS = {"read": "operand-read", "written": "operand-written", "read and written": "operand-both"};
  // a cell inside an operand of the step is outlined dashed, its title naming the operand
  function markOperand(td, outlined, offset, size) {
    if (!outlined) return;
    for (var i = 0; i < outlined.length; i++) {
      var outline = outlined[i];
      for (var j = 0; j < outline.spans.length; j++) {
        var span = outline.spans[j];
        if (span[0] < offset + size && offset < span[1]) {
          td.classList.add("operand", ROLE_CLASS[outline.role] || "operand-read");
          td.setAttribute("data-operand", outline.label + " (" + outline.role + ")");
          td.title = (td.title ? td.title : "") + operandNote(td);
          return;
        }
      }
    }
  }
  function operandNote(td) {
    var label = td.getAttribute("data-operand");
    return label ? "; operand " + label : "";
  }

  function renderPanel(entry, written, outlined) {
    var def = entry.def, view = panelView(def);
    if (written && written.length && !view.details.open && !ui.userClosed.has(def.name)) view.details.open = true;
    if (!view.details.open) return;
    var type = view.select.value;
    var hexSize = def.group === "registers" ? 8 : (ELEMENT_SIZE[def.element] || 1);
    var size = type === "hex" ? hexSize : ELEMENT_SIZE[type];
    var perRow = Math.max(1, Math.floor(def.row_bytes / size));
    var rows = Math.ceil(def.size / def.row_bytes);
    var start = 0;
    if (rows > MAX_ROWS) {
      start = ui.windows[def.name] || 0;
      // follow the step's writes into view, or else its operands
      var follow = written && written.length ? written[0] : (outlined && outlined.length ? outlined[0].spans[0] : null);
      if (follow) {
        var firstRow = Math.floor(follow[0] / def.row_bytes);
        var lastRow = Math.floor((follow[1] - 1) / def.row_bytes);
        if (firstRow < start || lastRow >= start + MAX_ROWS) start = Math.max(0, firstRow - 1);
      }
      start = Math.min(start, Math.max(0, rows - MAX_ROWS));
      ui.windows[def.name] = start;
      view.windowInput.value = String(start);
    }
    var end = Math.min(rows, start + MAX_ROWS);
    var data = new DataView(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength);
    var cells = [];
    var largest = 0;
    for (var r = start; r < end; r++) {
      for (var c = 0; c < perRow; c++) {
        var offset = r * def.row_bytes + c * size;
        if (offset + size > def.size) break;
        var value = element(data, offset, type, size);
        var isWritten = false;
        if (written) {
          for (var w = 0; w < written.length; w++) {
            if (written[w][0] < offset + size && offset < written[w][1]) { isWritten = true; break; }
          }
        }
        var magnitude = Math.abs(value[1]);
        if (isFinite(magnitude) && magnitude > largest) largest = magnitude;
        cells.push([r, c, value[0], magnitude, isWritten, offset]);
      }
    }
    var table = el("table", {className: "iv-grid"});
    var head = el("tr", {}, [el("th", {scope: "col", text: def.labels ? "register" : "row"})]);
    for (var h = 0; h < perRow; h++) head.appendChild(el("th", {scope: "col", text: String(h)}));
    if (def.labels && type !== "hex") head.appendChild(el("th", {scope: "col", text: "hex"}));
    table.appendChild(el("thead", {}, [head]));
    var body = el("tbody");
    var tr = null, rowOf = -1;
    cells.forEach(function (cell) {
      if (cell[0] !== rowOf) {
        if (tr && def.labels && type !== "hex") tr.appendChild(hexCell(data, rowOf));
        rowOf = cell[0];
        var label = def.labels ? def.labels[rowOf] : String(rowOf);
        tr = el("tr", {}, [el("th", {scope: "row", text: label,
                                     title: "byte " + rowOf * def.row_bytes +
                                            (def.address !== undefined ? ", address 0x" +
                                             (def.address + rowOf * def.row_bytes).toString(16) : "")})]);
        body.appendChild(tr);
      }
      var td = el("td", {"data-row": String(cell[0]), "data-col": String(cell[1]), "data-value": cell[2],
                         "data-offset": String(cell[5]), text: cell[2]});
      markOperand(td, outlined, cell[5], size);
      if (cell[4]) {
        // a written cell can be asked how it was computed: by a click, or Enter when it has the focus
        var explained = isExplained(ui.t, def.name, def.size, cell[5], size);
        td.classList.add("written"); if (explained) td.classList.add("has-working");
        td.setAttribute("data-size", String(size));
        td.setAttribute("tabindex", "0");
        td.setAttribute("role", "button");
        td.title = (explained ? "click for how it was computed" : "written by this step (no account of it here)") +
                   operandNote(td);
      }
      if (ui.heat && largest > 0) {
        var colours = heatColour(cell[3] / largest);
        td.style.background = colours[0];
        td.style.color = colours[1];
      }
      tr.appendChild(td);
    });
    if (tr && def.labels && type !== "hex") tr.appendChild(hexCell(data, rowOf));
    table.appendChild(body);
    view.grid.replaceChildren(table);
  }

  function hexCell(data, row) { return el("td", {className: "iv-hex", text: "0x" + hexText(data, row * 8, 8)}); }

  function render() {
    var t = ui.t, state = stateAt(t);
    current = state;
    var written = writtenRanges(t), outlines = outlinesAt(t);
    var seen = new Set();
    state.panels.forEach(function (entry, name) {
      seen.add(name);
      renderPanel(entry, written.get(name), outlines.get(name));
      (viewsOf.get(name) || []).forEach(function (v) { renderDerived(entry, written.get(name), v, outlines.get(name)); });
    });
    var operands = t > 0 ? (steps[t - 1].outlines || []) : [];
    operandsLine.replaceChildren.apply(operandsLine, operands.length ? [el("span", {text: "Operands of this step: "})]
      .concat(operands.map(function (outline, i) {
        return el("span", {className: "iv-operand-name " + (ROLE_CLASS[outline.role] || "operand-read"),
                           text: (i ? "; " : "") + outline.label + " (" + outline.role + ")"});
      })) : []);
    operandsLine.hidden = !operands.length;
    panelViews.forEach(function (view, name) {
      if (!seen.has(name)) { view.box.remove(); panelViews.delete(name); }
    });
    legendHeat.hidden = !ui.heat;
    slider.value = String(t);
    stepNumber.textContent = String(t);
    back.disabled = t === 0;
    first.disabled = t === 0;
    forward.disabled = t === N;
    last.disabled = t === N;
    lines.forEach(function (line) { line.removeAttribute("aria-current"); line.classList.remove("next"); });
    var ran = t > 0 ? steps[t - 1] : null;
    if (ran && lines[ran.instruction]) lines[ran.instruction].setAttribute("aria-current", "step");
    if (t < N && lines[steps[t].instruction]) lines[steps[t].instruction].classList.add("next");
    if (ran) {
      var ins = model.listing[ran.instruction];
      status.textContent = "Step " + t + " of " + N + " ran instruction " + ran.instruction + " at 0x" +
        ran.pc.toString(16) + ": " + (ins ? ins.text : "") +
        (t < N ? "" : (model.end && model.end.halted ? " (the program's end)" : ""));
    } else {
      status.textContent = "The state before the first step" + (N ? "" : " (the run has no steps)") + ".";
    }
    if (ran && ran.fault) {
      faultBanner.hidden = false;
      faultBanner.textContent = "Fault " + ran.fault.kind + " at instruction " + ran.fault.index + ": " +
        ran.fault.rule;
    } else {
      faultBanner.hidden = true;
      faultBanner.textContent = "";
    }
  }

  panelsBox.addEventListener("click", function (event) {
    var cell = event.target.closest && event.target.closest("td.written");
    if (cell) openWorking(cell);
  });
  panelsBox.addEventListener("keydown", function (event) {
    var cell = event.target.closest && event.target.closest("td.written");
    if (cell && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); openWorking(cell); }
  });

  function go(t) {
    t = Math.max(0, Math.min(N, t));
    if (t !== ui.t) closeWorking(false); // a working belongs to the step it was opened at
    ui.t = t;
    render();
  }

  function runToBreakpoint() {
    var t = ui.t;
    while (t < N) {
      t++;
      if (ui.breakpoints.has(steps[t - 1].instruction)) break;
    }
    go(t);
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !workingBox.hidden) { closeWorking(true); event.preventDefault(); return; }
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey ||
        event.metaKey) return;
    var moves = {ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1};
    if (event.key in moves) { go(ui.t + moves[event.key]); event.preventDefault(); }
    else if (event.key === "Home") { go(0); event.preventDefault(); }
    else if (event.key === "End") { go(N); event.preventDefault(); }
  });

  render();
})();
