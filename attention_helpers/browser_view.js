// The live picture of a slider panel, drawn in the student's browser (anywidget's render).
//
// The kernel sends the layout once ("spec": where each chart, label and colour bar stands,
// measured on the panel's matplotlib figure, and the colours of its colour map) and then,
// at each slider move, only numbers: "values" (every chart's values, float64, one after
// the other) and "extras" (text read-outs, a free colour scale's ends and ticks, an error).
// This module turns them into SVG: a colour per cell from the same table matplotlib uses,
// the number written as Python's format() writes it, bars on the same value axis.
// It holds no course logic: what to show is decided in the kernel (browser_view.py).

const SVG = "http://www.w3.org/2000/svg";
const DESCRIBE_AFTER_MS = 250; // ask for "the picture in words" once the picture rests this long

// ---- numbers as Python writes them -----------------------------------------------------

// format(value, ".Nf") in Python with a true minus sign, without the minus of a number that
// rounds to zero (as plots._number). JavaScript's toFixed rounds an exact tie (0.125) up,
// Python to even (0.12).
export function formatNumber(value, fmt) {
  const match = /^\.(\d+)f$/.exec(fmt);
  if (!match) throw new Error(`number format ${fmt} is not of the form .Nf`);
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "\u2212inf";
  const digits = Number(match[1]);
  const size = Math.abs(value);
  let text = size.toFixed(digits);
  const exact = size.toFixed(Math.min(100, digits + 30)); // the decimal expansion, far enough
  if (exact.endsWith("5" + "0".repeat(29)) && Number(text[text.length - 1]) % 2 === 1) {
    text = text.slice(0, -1) + String(Number(text[text.length - 1]) - 1); // the even neighbour
  }
  const negative = value < 0 || Object.is(value, -0);
  return negative && /[1-9]/.test(text) ? "\u2212" + text : text;
}

// ---- colours ---------------------------------------------------------------------------

// The entry of a colour table of n colours that matplotlib's Colormap picks for a value
// already normalised to 0..1 (below 0: the first, 1 and above: the last).
export function colourIndex(normalised, n) {
  let x = normalised * n;
  if (x === n) x = n - 1;
  return x < 0 ? 0 : x >= n ? n - 1 : Math.floor(x);
}

function el(name, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// A text at (x, y): its middle there unless `anchor`/`baseline` say otherwise; "\n" breaks lines.
function label(parent, spec, options = {}) {
  if (!spec || !spec.text) return null;
  const lines = spec.text.split("\n");
  const node = el("text", {
    x: spec.x, y: spec.y, "font-size": spec.size, "text-anchor": options.anchor || "middle",
    "dominant-baseline": "central",
  }, parent);
  if (spec.rotate) node.setAttribute("transform", `rotate(${spec.rotate} ${spec.x} ${spec.y})`);
  if (lines.length === 1) {
    node.textContent = spec.text;
  } else {
    const first = -((lines.length - 1) / 2) * 1.2;
    lines.forEach((line, k) => {
      const span = el("tspan", {x: spec.x, dy: `${k === 0 ? first : 1.2}em`}, node);
      span.textContent = line;
    });
  }
  return node;
}

// A colour bar: the colour table as bands from bottom to top, ticks and labels beside it.
function colourBar(parent, bar, lut, id) {
  const gradient = el("linearGradient", {id, x1: 0, y1: 1, x2: 0, y2: 0}, parent.ownerSVGElement.querySelector("defs"));
  lut.forEach((colour, k) => {
    el("stop", {offset: k / lut.length, "stop-color": colour}, gradient);
    el("stop", {offset: (k + 1) / lut.length, "stop-color": colour}, gradient);
  });
  const [x, y, w, h] = bar.box;
  el("rect", {x, y, width: w, height: h, fill: `url(#${id})`}, parent);
  el("rect", {x, y, width: w, height: h, fill: "none", stroke: "black", "stroke-width": 0.8}, parent);
  const ticks = el("g", {class: "ah-ticks"}, parent);
  return (scale) => {
    ticks.replaceChildren();
    for (const {value, text} of scale.ticks) {
      const ty = y + h * (1 - (value - scale.lo) / (scale.hi - scale.lo));
      el("line", {x1: x + w, x2: x + w + bar.tick, y1: ty, y2: ty, stroke: "black", "stroke-width": 0.8}, ticks);
      label(ticks, {text, x: bar.labels_x, y: ty, size: bar.size}, {anchor: "start"});
    }
  };
}

// ---- the charts ------------------------------------------------------------------------

function heatmap(svg, chart, index) {
  const [x0, y0, w, h] = chart.box;
  const [rows, cols] = chart.shape;
  const g = el("g", {class: "ah-heatmap", "data-chart": index}, svg);
  const cells = [], numbers = [];
  const cw = w / cols, ch = h / rows;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      cells.push(el("rect", {x: x0 + j * cw, y: y0 + i * ch, width: cw + 0.02, height: ch + 0.02,
                             "data-row": i, "data-col": j, "shape-rendering": "crispEdges"}, g));
    }
  }
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const t = el("text", {x: x0 + (j + 0.5) * cw, y: y0 + (i + 0.5) * ch, "font-size": chart.number_size,
                            "text-anchor": "middle", "dominant-baseline": "central",
                            "data-row": i, "data-col": j, class: "ah-number"}, g);
      numbers.push(t);
    }
  }
  el("rect", {x: x0, y: y0, width: w, height: h, fill: "none", stroke: "black", "stroke-width": 0.8}, g);
  chart.xticks.forEach((spec) => label(g, spec));
  chart.yticks.forEach((spec) => label(g, spec, {anchor: "end"}));
  label(g, chart.title);
  label(g, chart.xlabel);
  label(g, chart.ylabel);
  const setScale = chart.colorbar ? colourBar(g, chart.colorbar, chart.lut, `ah-bar-${chart.uid}`) : null;
  if (setScale && chart.scale) setScale(chart.scale);
  if (chart.categories) {
    chart.categories.forEach(({swatch, text, colour}) => {
      el("rect", {x: swatch[0], y: swatch[1], width: swatch[2], height: swatch[3], fill: colour,
                  stroke: chart.hatch_colour, "stroke-width": 0.5}, g);
      label(g, text, {anchor: "start"});
    });
  }
  let key = null;
  if (chart.key) { // "masked", shown while a cell is
    key = el("g", {class: "ah-key", visibility: "hidden"}, g);
    const [kx, ky, kw, kh] = chart.key.swatch;
    el("rect", {x: kx, y: ky, width: kw, height: kh, fill: `url(#${chart.hatch_id})`}, key);
    label(key, chart.key.text, {anchor: "start"});
  }
  const states = chart.categories ? new Map(chart.categories.map((c) => [c.value, c.colour])) : null;

  return (values, extras) => {
    const scale = (extras.scales && extras.scales[index]) || chart.scale;
    if (setScale && extras.scales && extras.scales[index]) setScale(scale);
    let anyMasked = false;
    for (let k = 0; k < rows * cols; k++) {
      const v = values[chart.offset + k];
      const masked = (chart.mask && !chart.mask[k]) || !Number.isFinite(v);
      let fill, text = "", ink = "black";
      if (states) {
        fill = states.get(v) || chart.error_colour; // an unknown state: marked, never a colour of the key
      } else if (masked) {
        fill = `url(#${chart.hatch_id})`;
        anyMasked = true;
      } else {
        const n = colourIndex((v - scale.lo) / (scale.hi - scale.lo), chart.lut.length);
        fill = chart.lut[n];
        ink = chart.ink[n] === "w" ? "white" : "black";
        text = formatNumber(v, chart.fmt);
      }
      if (cells[k].getAttribute("fill") !== fill) cells[k].setAttribute("fill", fill);
      if (numbers[k].textContent !== text) numbers[k].textContent = text;
      if (numbers[k].getAttribute("fill") !== ink) numbers[k].setAttribute("fill", ink);
    }
    if (key) key.setAttribute("visibility", anyMasked ? "visible" : "hidden");
  };
}

function bars(svg, chart, index) {
  const [x0, y0, w, h] = chart.box;
  const g = el("g", {class: "ah-bars", "data-chart": index}, svg);
  const axis = el("g", {class: "ah-axis"}, g);
  const rects = chart.bars.map(([x, width], k) =>
    el("rect", {x, width, y: y0 + h, height: 0, fill: chart.colour, "data-bar": k}, g));
  const numbers = chart.bars.map(([x, width], k) =>
    el("text", {x: x + width / 2, y: y0 + h, "font-size": chart.number_size, "text-anchor": "middle",
                "dominant-baseline": "text-after-edge", class: "ah-number", "data-bar": k,
                visibility: chart.value_labels ? "visible" : "hidden"}, g));
  el("rect", {x: x0, y: y0, width: w, height: h, fill: "none", stroke: "black", "stroke-width": 0.8}, g);
  chart.xticks.forEach((spec) => label(g, spec));
  label(g, chart.title);
  label(g, chart.xlabel);
  label(g, chart.ylabel);
  let scale = null;
  // Where value v stands on the value axis (log or linear), in pixels from the top.
  const at = (v) => {
    const f = chart.log ? (Math.log10(v) - Math.log10(scale.lo)) / (Math.log10(scale.hi) - Math.log10(scale.lo))
                        : (v - scale.lo) / (scale.hi - scale.lo);
    return y0 + h * (1 - Math.min(Math.max(f, 0), 1));
  };
  const setAxis = (next) => {
    scale = next;
    axis.replaceChildren();
    for (const {value, text, minor} of scale.ticks) {
      const ty = at(value);
      el("line", {x1: x0 - (minor ? chart.tick / 2 : chart.tick), x2: x0, y1: ty, y2: ty,
                  stroke: "black", "stroke-width": minor ? 0.6 : 0.8}, axis);
      if (text) label(axis, {text, x: chart.yticks_x, y: ty, size: chart.tick_size}, {anchor: "end"});
    }
  };
  setAxis(chart.scale);
  return (values, extras) => {
    if (extras.scales && extras.scales[index]) setAxis(extras.scales[index]);
    chart.bars.forEach((_, k) => {
      const v = values[chart.offset + k];
      const ok = Number.isFinite(v) && !(chart.log && v <= 0);
      const base = chart.log ? y0 + h : at(Math.min(Math.max(0, scale.lo), scale.hi));
      const top = ok ? at(v) : base;
      rects[k].setAttribute("y", Math.min(top, base));
      rects[k].setAttribute("height", Math.abs(base - top));
      rects[k].setAttribute("fill", ok ? chart.colour : chart.error_colour);
      numbers[k].setAttribute("y", ok ? at(Math.max(v, chart.log ? scale.lo : 0)) : base);
      numbers[k].textContent = ok ? formatNumber(v, chart.fmt) : String(v);
    });
  };
}

// ---- the widget ------------------------------------------------------------------------

function hatching(defs, id, spec) {
  const pattern = el("pattern", {id, width: spec.spacing, height: spec.spacing, patternUnits: "userSpaceOnUse"}, defs);
  const s = spec.spacing;
  el("rect", {width: s, height: s, fill: spec.background}, pattern);
  for (const [x1, y1, x2, y2] of [[0, s, s, 0], [-s / 2, s / 2, s / 2, -s / 2], [s / 2, 3 * s / 2, 3 * s / 2, s / 2]]) {
    el("line", {x1, y1, x2, y2, stroke: spec.colour, "stroke-width": spec.width}, pattern);
  }
}

function render({ model, el: root }) {
  const box = document.createElement("div");
  box.className = "ah-picture";
  root.appendChild(box);
  let draw = () => {}, frame = 0, describeTimer = null, spec = null;

  const build = () => {
    spec = model.get("spec");
    box.replaceChildren();
    box.dataset.uid = spec.uid; // which panel this is, for tests that ask the kernel about it
    const zoom = spec.zoom || 1;
    const svg = el("svg", {width: spec.width * zoom, height: spec.height * zoom,
                           viewBox: `0 0 ${spec.width} ${spec.height}`,
                           role: "img", "font-family": spec.font, class: "ah-svg"});
    box.appendChild(svg);
    const title = el("title", {}, svg);
    title.textContent = spec.name;
    const defs = el("defs", {}, svg);
    hatching(defs, spec.hatch.id, spec.hatch);
    const charts = spec.charts.map((chart, k) => (chart.kind === "heatmap" ? heatmap : bars)(svg, chart, k));
    const caption = document.createElement("p");
    caption.className = "ah-caption";
    caption.textContent = spec.caption || "";
    caption.hidden = !spec.caption;
    const readout = document.createElement("pre");
    readout.className = "ah-readout";
    const error = document.createElement("p");
    error.className = "ah-error";
    error.setAttribute("role", "alert");
    const details = document.createElement("details");
    details.innerHTML = "<summary>The picture in words</summary>";
    const words = document.createElement("p");
    words.id = `ah-words-${spec.uid}`;
    details.appendChild(words);
    svg.setAttribute("aria-describedby", words.id);
    box.append(caption, readout, error, details);

    draw = () => {
      const data = model.get("values"), extras = model.get("extras") || {};
      const count = data ? data.byteLength / 8 : 0;
      const values = new Float64Array(count);
      for (let k = 0; k < count; k++) values[k] = data.getFloat64(8 * k, true);
      if (count !== spec.size) {
        error.textContent = `The picture got ${count} numbers for a layout of ${spec.size}: it shows the last that fitted.`;
      } else {
        charts.forEach((update) => update(values, extras));
        error.textContent = extras.error || "";
      }
      const texts = (extras.texts || []).join("\n");
      readout.textContent = texts;
      readout.hidden = !texts;
      frame += 1;
      box.dataset.frame = String(frame);
      clearTimeout(describeTimer);
      describeTimer = setTimeout(() => model.send({describe: frame}), DESCRIBE_AFTER_MS);
    };
    words.textContent = model.get("description");
    draw();
  };

  const describe = () => {
    const words = box.querySelector("details p");
    if (words) words.textContent = model.get("description");
  };
  try {
    build();
    model.send({rendered: true});
  } catch (err) {
    box.textContent = `This picture could not be drawn here (${err}); the kernel will draw it instead.`;
    model.send({failed: String(err)});
  }
  // One message sets values and extras together: draw once, after both (a microtask later).
  let pending = false;
  const redraw = () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => { pending = false; draw(); });
  };
  model.on("change:spec", build);
  model.on("change:values", redraw);
  model.on("change:extras", redraw);
  model.on("change:description", describe);
  return () => {
    clearTimeout(describeTimer);
    model.off("change:spec", build);
    model.off("change:values", redraw);
    model.off("change:extras", redraw);
    model.off("change:description", describe);
  };
}

export default { render };
